// A tiny supervisor between the conductor and each opencode it starts, so that no opencode (and
// nothing opencode started) outlives its conductor, even one killed with SIGKILL (which runs no
// exit hook). The conductor holds the write end of the supervisor's stdin; when the conductor dies,
// for any reason, the kernel closes it, the supervisor sees end-of-input and stops opencode
// (SIGTERM, then SIGKILL after a second). It runs as `node -e SUPERVISOR_SOURCE <binary> <args…>`
// so it needs no file of its own next to the built package, and it leads its own process group
// (spawned detached), so the conductor can still stop the whole group. Its first line on stdout is
// `occ-supervisor pid <opencode pid>`; everything after is opencode's own output.
//
// opencode runs a shell command of a turn in a process group of its own (so it can stop the
// command's whole tree), out of reach of a signal to the supervisor's group, and orphaned when
// opencode dies. So before it signals, the supervisor lists every process below it (Linux /proc;
// elsewhere the group signal is all there is), signals them too, and when opencode has exited
// kills whichever of them still runs (same pid, same start time: pids are reused).
//
// When opencode has exited it removes opencode's own temp folder (named in SUPERVISOR_SCRATCH,
// scratch.ts), so that goes too when the conductor was SIGKILLed.
export const SUPERVISOR_SCRATCH = "OCC_SUPERVISOR_SCRATCH";

export const SUPERVISOR_SOURCE = String.raw`
const { spawn } = require("node:child_process");
const { readdirSync, readFileSync, rmSync } = require("node:fs");
const [binary, ...args] = process.argv.slice(1);
const scratch = process.env.${SUPERVISOR_SCRATCH};
delete process.env.${SUPERVISOR_SCRATCH};
const removeScratch = () => { if (scratch) { try { rmSync(scratch, { recursive: true, force: true, maxRetries: 3 }); } catch {} } };
const child = spawn(binary, args, { stdio: ["ignore", "inherit", "inherit"] });
const stat = (pid) => {
  try {
    const line = readFileSync("/proc/" + pid + "/stat", "utf8");
    const f = line.slice(line.lastIndexOf(")") + 2).split(" ");
    return f[0] === "Z" ? undefined : { pid, ppid: Number(f[1]), start: f[19] };
  } catch { return undefined; }
};
const helpers = new Map();
const remember = () => {
  let all = [];
  try { all = readdirSync("/proc").filter((n) => /^\d+$/.test(n)).map((n) => stat(Number(n))).filter(Boolean); } catch {}
  const below = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) if (!below.has(p.pid) && below.has(p.ppid)) { below.add(p.pid); helpers.set(p.pid, p.start); grew = true; }
  }
};
const sweep = (signal) => {
  for (const [pid, start] of helpers) if (stat(pid)?.start === start) { try { process.kill(pid, signal); } catch {} }
};
let leaving = false;
const group = (signal) => { try { process.kill(-process.pid, signal); } catch { try { child.kill(signal); } catch {} } };
const parentGone = () => {
  if (leaving) return;
  leaving = true;
  remember();
  sweep("SIGTERM");
  group("SIGTERM");
  setTimeout(() => { remember(); sweep("SIGKILL"); group("SIGKILL"); }, 1000).unref();
};
child.once("spawn", () => process.stdout.write("occ-supervisor pid " + child.pid + "\n"));
child.once("error", (error) => { process.stderr.write("occ-supervisor: " + (error.code || "") + " " + error.message + "\n"); removeScratch(); process.exit(127); });
child.once("exit", (code, signal) => { sweep("SIGKILL"); removeScratch(); process.exit(code ?? (signal ? 128 : 1)); });
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => { remember(); sweep(signal); try { child.kill(signal); } catch {} });
process.stdin.on("end", parentGone);
process.stdin.on("error", parentGone);
process.stdin.resume();
`;

export const SUPERVISOR_PID_LINE = /^occ-supervisor pid (\d+)$/m;
