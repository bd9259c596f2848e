// How fast a fresh MCP server answers the calls a client makes before its first model turn
// (`initialize` on 2025-11-25 or `server/discover` on 2026-07-28, then `tools/list`,
// `resources/list`, `resources/templates/list`, `prompts/list`), on both eras, whatever opencode
// holds: a real opencode with no session, the same with 1,000 sessions, and opencode down. Each round starts the built server (`dist/cli.js`) over stdio, waits until it is
// up (its start-up line on stderr), then times each request from the line written to the answer
// read. Target: each ≤ 100 ms. Then, with 1,000 sessions, a tool call connects and the listing is
// timed again (it answers from what the server keeps and reads the sessions in the background).
// Run: npm run bench:lists [-- --rounds N]
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { connect } from "../src/client/connect.js";
import { CLI } from "../test/support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../test/support/opencode.js";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const ROUNDS = Number(values.rounds);
const SESSIONS = 1_000;
const LISTS = ["tools/list", "resources/list", "resources/templates/list", "prompts/list"] as const;

interface Peer {
  /** From the spawn to the server's start-up line. */
  startMs: number;
  /** The answer's result, or `{error}` when it was an error. */
  request(method: string, params?: Record<string, unknown>): Promise<{ ms: number; result: Record<string, unknown> }>;
  close(): Promise<void>;
}

/** The built server over stdio, spoken to line by line (what a client writes, nothing of ours between). */
async function startServer(env: Record<string, string>, home: string): Promise<Peer> {
  const spawned = performance.now();
  const child: ChildProcess = spawn(process.execPath, [CLI], {
    env: { PATH: process.env.PATH ?? "", HOME: home, XDG_STATE_HOME: join(home, "state"), ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const pending = new Map<number, (message: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const message = JSON.parse(line) as { id?: number };
    if (typeof message.id === "number") pending.get(message.id)?.(message);
  });
  // Up once it has said where its console is (written after the transport is connected).
  await new Promise<void>((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes("opencode-conductor: ")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the server exited (${code}): ${err}`)));
  });
  const startMs = performance.now() - spawned;
  let id = 0;
  return {
    startMs,
    request(method, params = {}) {
      const n = ++id;
      const answered = new Promise<Record<string, unknown>>((resolve) => pending.set(n, resolve));
      const t0 = performance.now();
      child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id: n, method, params })}\n`);
      // An error answer is timed too (an old server's listing failed when opencode was down).
      return answered.then((message) => ({ ms: performance.now() - t0, result: (message.result ?? { error: message.error }) as Record<string, unknown> }));
    },
    async close() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.stdin!.end();
      await exited;
    },
  };
}

const INITIALIZE = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } };
/** What a 2026-07-28 client puts in every request. */
const ENVELOPE = {
  _meta: {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": {},
  },
};
type Era = "2025-11-25" | "2026-07-28";

/** One cold server: the opening call, then each list call once, in the order a client makes them. */
async function coldRound(era: Era, env: Record<string, string>, home: string): Promise<Record<string, number>> {
  const peer = await startServer(env, home);
  try {
    const times: Record<string, number> = {};
    times.start = peer.startMs;
    times.open = (era === "2025-11-25" ? await peer.request("initialize", INITIALIZE) : await peer.request("server/discover", ENVELOPE)).ms;
    for (const method of LISTS) {
      const answer = await peer.request(method, era === "2025-11-25" ? {} : ENVELOPE);
      times[method] = answer.ms;
      if (answer.result.error) errors.add(method);
    }
    return times;
  } finally {
    await peer.close();
  }
}

/** Calls that answered with an error in some round (marked in the table). */
const errors = new Set<string>();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function scenario(name: string, env: Record<string, string>): Promise<void> {
  for (const era of ["2025-11-25", "2026-07-28"] as const) await eraScenario(era, name, env);
}

async function eraScenario(era: Era, name: string, env: Record<string, string>): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "occ-bench-lists-"));
  try {
    const rounds: Record<string, number>[] = [];
    for (let i = 0; i < ROUNDS; i++) rounds.push(await coldRound(era, env, home));
    const cells = ["start", "open", ...LISTS].map((m) => {
      const xs = rounds.map((r) => r[m]!);
      return `${ms(median(xs))} (max ${ms(Math.max(...xs))})${errors.has(m) ? " error" : ""}`;
    });
    errors.clear();
    console.log(`| ${era} | ${name} | ${cells.join(" | ")} |`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** With many sessions: a tool call connects, then resources/list answers from what is kept. */
async function afterConnect(oc: TestOpencode): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "occ-bench-lists-"));
  const peer = await startServer({ OPENCODE_URL: oc.url, OPENCODE_PASSWORD: oc.password, OPENCODE_CONDUCTOR_DIRECTORY: oc.directory }, home);
  try {
    await peer.request("initialize", INITIALIZE);
    const status = await peer.request("tools/call", { name: "oc_status", arguments: {} });
    const first = await peer.request("resources/list");
    // The background read lands; the next listing shows the sessions.
    let listed = first;
    const t0 = performance.now();
    const transcripts = (r: { result: Record<string, unknown> }) =>
      (r.result.resources as Array<{ uri: string }>).filter((x) => x.uri.startsWith("opencode://session/")).length;
    while (transcripts(listed) === 0 && performance.now() - t0 < 30_000) listed = await peer.request("resources/list");
    console.log(
      `\nWith ${SESSIONS} sessions, after a tool call connected (oc_status ${ms(status.ms)}): resources/list ${ms(first.ms)} ` +
        `(${transcripts(first)} transcripts listed), then ${ms(listed.ms)} with ${transcripts(listed)} ` +
        `listed once the background read (${ms(performance.now() - t0)}) was in.`,
    );
  } finally {
    await peer.close();
    rmSync(home, { recursive: true, force: true });
  }
}

const oc = await startOpencode();
try {
  const env = { OPENCODE_URL: oc.url, OPENCODE_PASSWORD: oc.password, OPENCODE_CONDUCTOR_DIRECTORY: oc.directory };
  console.log(`Each call on a server just started, median of ${ROUNDS} servers (max):\n`);
  console.log(`| era | opencode | start-up | initialize / server/discover | ${LISTS.join(" | ")} |`);
  console.log(`|---|---|${"---|".repeat(LISTS.length + 2)}`);
  await scenario("fresh (no session)", env);
  const client = connect({ url: oc.url, password: oc.password, directory: oc.directory });
  for (let i = 0; i < SESSIONS; i += 25)
    await Promise.all(Array.from({ length: 25 }, (_, j) => client.call("session.create", { body: { title: `bench ${i + j}` } })));
  await scenario(`${SESSIONS} sessions`, env);
  await scenario("down (nothing listens)", { OPENCODE_URL: "http://127.0.0.1:9", OPENCODE_PASSWORD: "x" });
  await afterConnect(oc);
} finally {
  await oc.stop();
}
