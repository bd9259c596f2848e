// The built MCP server (dist/cli.js) as a child process over stdio, as a user's client runs it, with
// what a benchmark reads from outside: its CPU time and memory (/proc/PID), its heap after a full GC
// (heap-probe.mjs, on request), and optionally pinned to some cores (taskset).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CLI, toolCallOf, type ToolCall } from "../../test/support/mcp-client.js";
import { scratchHome } from "../../test/support/scratch-home.js";

const PROBE = fileURLToPath(new URL("./heap-probe.mjs", import.meta.url));
const MEMORY_PROBE = fileURLToPath(new URL("./memory-probe.mjs", import.meta.url));
const TICKS_PER_S = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;

export interface McpChild {
  pid: number;
  call(name: string, args?: Record<string, unknown>): Promise<ToolCall>;
  /** User + system CPU time the server has used so far (ms; the kernel counts in ticks of 10 ms). */
  cpuMs(): number;
  /** The same, split into user and system (kernel) time. */
  cpuSplit(): { userMs: number; systemMs: number };
  /**
   * CPU time so far (ms) of the main thread (the JavaScript, and GC's pauses), apart from the process's
   * whole: the rest is libuv's pool (file system calls) and V8's helpers (concurrent GC, compiling),
   * which Node 20 does not name apart.
   */
  mainThreadCpuMs(): number;
  /** Resident memory now and its high-water mark (MB). */
  memory(): { rssMb: number; peakMb: number };
  /** The heap after a full GC (MB), read through the probe. */
  heapAfterGc(): Promise<HeapReading>;
  /** Its state dir (ledger, audit trail, task records). */
  stateDir: string;
  close(): Promise<void>;
}

/** The heap a full GC leaves (MB), and the part of it that is V8's compiled code and bytecode. */
export interface HeapReading {
  heapMb: number;
  codeMb: number;
  bytecodeMb: number;
}

export interface McpChildOptions {
  /** `taskset -c` list, e.g. "1": the server runs on these cores only. */
  cpus?: string;
  env?: Record<string, string>;
  /** Another server script to run instead of ours (a yardstick, e.g. bare-bridge.mjs). */
  script?: string;
}

export async function startMcpChild(server: { url: string; password: string; directory: string }, options: McpChildOptions = {}): Promise<McpChild> {
  const script = options.script ?? CLI;
  if (!existsSync(script)) throw new Error(`${script} is missing: run \`npm run build\` first.`);
  const work = mkdtempSync(join(tmpdir(), "occ-bench-mcp-"));
  const heapFile = join(work, "heap.json");
  const stateDir = join(work, "state");
  // BENCH_CPU_PROF=DIR: a V8 CPU profile of the server lands in DIR when it exits (for looking into a figure).
  const profile = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  // BENCH_MEMORY_FILE=PATH: what the server's resident memory is made of, sampled (memory-probe.mjs).
  const memory = process.env.BENCH_MEMORY_FILE ? ["--import", MEMORY_PROBE] : [];
  // BENCH_NODE_FLAGS="--flag ...": V8/Node flags for the server (for comparing a flag's effect on a figure).
  const flags = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
  const node = [process.execPath, ...flags, "--expose-gc", ...profile, "--import", PROBE, ...memory, script];
  const [command, ...args] = options.cpus ? ["taskset", "-c", options.cpus, ...node] : node;
  const transport = new StdioClientTransport({
    command: command!,
    args,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: scratchHome(),
      OPENCODE_URL: server.url,
      OPENCODE_PASSWORD: server.password,
      OPENCODE_CONDUCTOR_DIRECTORY: server.directory,
      OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
      BENCH_HEAP_FILE: heapFile,
      // BENCH_HEAP_SNAPSHOTS=DIR: a V8 heap snapshot lands in DIR at each heap reading (for a diff).
      ...(process.env.BENCH_HEAP_SNAPSHOTS ? { BENCH_HEAP_SNAPSHOTS: process.env.BENCH_HEAP_SNAPSHOTS } : {}),
      ...(process.env.BENCH_MEMORY_FILE ? { BENCH_MEMORY_FILE: process.env.BENCH_MEMORY_FILE } : {}),
      // BENCH_CHILD_ENV="NAME=VALUE ...": more variables for the server (e.g. MALLOC_ARENA_MAX, for a comparison).
      ...Object.fromEntries((process.env.BENCH_CHILD_ENV?.split(" ").filter(Boolean) ?? []).map((kv) => kv.split("=", 2) as [string, string])),
      ...options.env,
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(transport);
  const pid = transport.pid!;
  const status = () => readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status())?.[1] ?? 0);
  const cpuSplit = () => {
    // /proc/PID/stat: the command may hold spaces, so count fields after its closing parenthesis.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return { userMs: (Number(fields[11]) / TICKS_PER_S) * 1000, systemMs: (Number(fields[12]) / TICKS_PER_S) * 1000 };
  };
  const mainThreadCpuMs = () => {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_S) * 1000;
  };
  return {
    pid,
    stateDir,
    mainThreadCpuMs,
    async call(name, args = {}) {
      const raw = (await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 })) as CallToolResult;
      return toolCallOf(raw);
    },
    cpuMs() {
      const { userMs, systemMs } = cpuSplit();
      return userMs + systemMs;
    },
    cpuSplit,
    memory: () => ({ rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 }),
    async heapAfterGc() {
      rmSync(heapFile, { force: true });
      process.kill(pid, "SIGUSR2");
      const deadline = Date.now() + 30_000;
      while (!existsSync(heapFile)) {
        if (Date.now() > deadline) throw new Error("the MCP server did not report its heap within 30 s");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const read = JSON.parse(readFileSync(heapFile, "utf8")) as { heapUsed: number; code: number; bytecode: number };
      return { heapMb: read.heapUsed / 2 ** 20, codeMb: read.code / 2 ** 20, bytecodeMb: read.bytecode / 2 ** 20 };
    },
    async close() {
      await client.close();
      rmSync(work, { recursive: true, force: true });
    },
  };
}
