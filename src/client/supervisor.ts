// A tiny supervisor between the conductor and each opencode it starts, so that no opencode outlives
// its conductor, even one killed with SIGKILL (which runs no exit hook). The conductor holds the
// write end of the supervisor's stdin; when the conductor dies, for any reason, the kernel closes
// it, the supervisor sees end-of-input and stops opencode (SIGTERM, then SIGKILL after a second).
// It runs as `node -e SUPERVISOR_SOURCE <binary> <args…>` so it needs no file of its own next to
// the built package, and it leads its own process group (spawned detached), so the conductor can
// still stop the whole group. Its first line on stdout is `occ-supervisor pid <opencode pid>`;
// everything after is opencode's own output.
export const SUPERVISOR_SOURCE = String.raw`
const { spawn } = require("node:child_process");
const [binary, ...args] = process.argv.slice(1);
const child = spawn(binary, args, { stdio: ["ignore", "inherit", "inherit"] });
let leaving = false;
const group = (signal) => { try { process.kill(-process.pid, signal); } catch { try { child.kill(signal); } catch {} } };
const parentGone = () => {
  if (leaving) return;
  leaving = true;
  group("SIGTERM");
  setTimeout(() => group("SIGKILL"), 1000).unref();
};
child.once("spawn", () => process.stdout.write("occ-supervisor pid " + child.pid + "\n"));
child.once("error", (error) => { process.stderr.write("occ-supervisor: " + (error.code || "") + " " + error.message + "\n"); process.exit(127); });
child.once("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => { try { child.kill(signal); } catch {} });
process.stdin.on("end", parentGone);
process.stdin.on("error", parentGone);
process.stdin.resume();
`;

export const SUPERVISOR_PID_LINE = /^occ-supervisor pid (\d+)$/m;
