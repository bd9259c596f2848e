// Cold start against a yardstick: in one run, alternating, spawn a bare one-tool server on the same
// MCP SDK v2 and stdio transport (bench/support/bare-server.mjs) and our built server (dist/cli.js),
// N times each, and time spawn → answered `initialize` and spawn → answered `tools/list` (sent as
// soon as `initialize` is answered, as a client does). Prints the medians and our ratio to the bare
// server's. Target: ≤ 1.2× (docs/performance.md, "Start-up"). Each process gets a HOME and TMPDIR of
// its own, removed at the end; no opencode is needed (neither call contacts it).
// Run: npm run bench:cold [-- --runs N] [--cpu-prof DIR]  (--cpu-prof: a V8 profile of each of our servers)
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { CLI } from "../test/support/mcp-client.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "20" }, "cpu-prof": { type: "string" } } });
const RUNS = Number(values.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs must be a whole number ≥ 1, got ${values.runs}`);
const TARGET = 1.2;
/** A server that has not answered by then is broken, not slow: the run fails instead of hanging. */
const ANSWER_LIMIT_MS = 30_000;

const BARE = fileURLToPath(new URL("./support/bare-server.mjs", import.meta.url));
const profile = values["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${values["cpu-prof"]}`] : [];
const servers = { bare: [BARE], ours: [...profile, CLI] } as const;
type Name = keyof typeof servers;

interface Times {
  initialize: number;
  toolsList: number;
  /** The server's CPU time (user + system) when tools/list was answered: steadier than wall time on a loaded machine. */
  cpu: number;
}

const TICK_MS = 1000 / (Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100);
/** utime + stime of a live process (/proc/PID/stat fields 14 and 15, in clock ticks). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8")
    .replace(/^.*\) /, "")
    .split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

const INITIALIZE = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench-cold", version: "1" } };
const line = (message: Record<string, unknown>) => `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`;

/** One spawn: `initialize` is written at once (the pipe holds it until the server reads), `tools/list` on its answer. */
function coldStart(name: Name, home: string): Promise<Times> {
  return new Promise((resolve, reject) => {
    const spawned = performance.now();
    const child = spawn(process.execPath, servers[name], {
      env: { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: join(home, "tmp") },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const limit = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${name}: no answer within ${ANSWER_LIMIT_MS} ms; stderr: ${stderr.slice(-500)}`));
    }, ANSWER_LIMIT_MS);
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    let initialize = 0;
    let buffered = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
        const message = JSON.parse(buffered.slice(0, end)) as { id?: number; error?: unknown; result?: { tools?: unknown[] } };
        buffered = buffered.slice(end + 1);
        if (message.error) return fail(new Error(`${name}: ${JSON.stringify(message.error)}`));
        if (message.id === 1) {
          initialize = performance.now() - spawned;
          child.stdin.write(line({ method: "notifications/initialized" }) + line({ id: 2, method: "tools/list", params: {} }));
        } else if (message.id === 2) {
          const toolsList = performance.now() - spawned;
          const cpu = cpuMs(child.pid!);
          if (!message.result?.tools?.length) return fail(new Error(`${name}: tools/list listed no tool`));
          clearTimeout(limit);
          // Stdin closed is how a client stops a stdio server: both exit by themselves.
          child.once("exit", () => resolve({ initialize, toolsList, cpu }));
          child.stdin.end();
        }
      }
    });
    child.once("error", fail);
    child.stdin.write(line({ id: 1, method: "initialize", params: INITIALIZE }));
    function fail(error: Error) {
      clearTimeout(limit);
      child.kill("SIGKILL");
      reject(error);
    }
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const work = mkdtempSync(join(tmpdir(), "occ-bench-cold-"));
try {
  const times: Record<Name, Times[]> = { bare: [], ours: [] };
  for (let i = 0; i < RUNS; i++) {
    // Alternating which goes first, so that neither always runs on a machine the other just warmed.
    const order: Name[] = i % 2 ? ["ours", "bare"] : ["bare", "ours"];
    for (const name of order) {
      const home = join(work, `${name}-${i}`);
      mkdirSync(join(home, "tmp"), { recursive: true });
      times[name].push(await coldStart(name, home));
    }
  }
  console.log(`Spawn → answered request over stdio, median of ${RUNS} spawns each, alternating (Node ${process.version}):\n`);
  console.log("| server | initialize | tools/list | its CPU by then |");
  console.log("|---|---|---|---|");
  const medians = (name: Name) => ({
    initialize: median(times[name].map((t) => t.initialize)),
    toolsList: median(times[name].map((t) => t.toolsList)),
    cpu: median(times[name].map((t) => t.cpu)),
  });
  const bare = medians("bare");
  const ours = medians("ours");
  const row = (label: string, m: Times) => console.log(`| ${label} | ${m.initialize.toFixed(0)} ms | ${m.toolsList.toFixed(0)} ms | ${m.cpu.toFixed(0)} ms |`);
  row("bare one-tool SDK server", bare);
  row("opencode-conductor (dist/cli.js)", ours);
  const ratio = { initialize: ours.initialize / bare.initialize, toolsList: ours.toolsList / bare.toolsList };
  console.log(`| ratio | ${ratio.initialize.toFixed(2)}× | ${ratio.toolsList.toFixed(2)}× | ${(ours.cpu / bare.cpu).toFixed(2)}× |`);
  const met = ratio.initialize <= TARGET && ratio.toolsList <= TARGET;
  console.log(`\nTarget ≤ ${TARGET}× on both (wall time): ${met ? "met" : "missed"}. Load average at the end: ${loadavg()[0]!.toFixed(1)}.`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
