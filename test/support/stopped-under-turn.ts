// "opencode hung under a turn", the same on both majors: two oc_delegate calls wait on turns whose
// model answers only after the stop, the test opencode is SIGSTOPped (alive, answering nothing)
// for STOP_MS, and then SIGCONTed. What must hold:
// - the call with timeout_s 10 answers within 12 s of its start, `unreachable`, with its session id;
// - the call with timeout_s 120 answers within 122 s (once the stream is found silent and the
//   server does not answer two health checks), `unreachable`, with its session id, not `lost`;
// - oc_result during the stop answers `unreachable` too;
// - after SIGCONT, oc_wait says `done` for both, as the session re-read from opencode records;
// - no answer, task record or audit line ever said `lost`.
// The process is always continued (finally), so no stopped opencode is left behind.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpFor, type McpSession, type ToolCall } from "./mcp-client.js";
import type { TestOpencode } from "./opencode.js";
import { text } from "./scripted-model.js";

/** How long opencode stays stopped (the fault campaign's figure). */
export const STOP_MS = 60_000;
/** The documented bound past timeout_s (turns/deadline.ts: ANSWER_MARGIN_MS, plus the tool's own work). */
const MARGIN_MS = 2_000;

/** What opencode recorded of the session's last turn, re-read after SIGCONT. */
export interface RecordedTurn {
  /** The last reply finished (1.x `time.completed`, 2.x `finish`), without an error. */
  finished: boolean;
  text: string;
}

interface StoppedUnderTurn {
  server: TestOpencode;
  mcp: McpSession;
  /** The MCP server's state dir (task records and audit trail). */
  stateDir: string;
  /** Re-reads the session's last turn from opencode (the major's own routes). */
  recorded(sessionId: string): Promise<RecordedTurn>;
}

/** The story as one test file's suite: `start` starts the major's opencode, `recorded` re-reads a session from it. */
export function describeStopUnderTurns(
  title: string,
  start: () => Promise<TestOpencode>,
  recorded: (server: TestOpencode, sessionId: string) => Promise<RecordedTurn>,
): void {
  describe(title, () => {
    let server: TestOpencode;
    let mcp: McpSession;
    const stateDir = () => join(server.root, "state");
    beforeAll(async () => {
      server = await start();
      mcp = await startMcpFor(server, { OPENCODE_CONDUCTOR_STATE_DIR: stateDir() });
    });
    afterAll(async () => {
      await mcp?.close();
      await server?.stop();
    });

    it(`answers unreachable within timeout_s + 2 s with the session id; after ${STOP_MS / 1000} s and SIGCONT, done as recorded`, { timeout: 240_000 }, () =>
      stopUnderTurns({ server, mcp, stateDir: stateDir(), recorded: (sessionId) => recorded(server, sessionId) }),
    );
  });
}

interface Timed {
  call: ToolCall;
  ms: number;
}

function timed(run: () => Promise<ToolCall>): Promise<Timed> {
  const started = Date.now();
  const answer = run().then((call) => ({ call, ms: Date.now() - started }));
  answer.catch(() => undefined); // awaited below; a failure before that must not be an unhandled rejection
  return answer;
}

function expectUnreachable(t: Timed, timeoutS: number): string {
  const { call, ms } = t;
  expect(call.isError, call.text).toBe(false);
  expect(call.data.status, call.text).toBe("unreachable");
  expect(ms, `answered after ${ms} ms`).toBeLessThan(timeoutS * 1000 + MARGIN_MS);
  const sessionId = call.data.session_id as string;
  expect(sessionId).toMatch(/^ses_/);
  expect(call.text).toContain(sessionId);
  expect(call.data.next as string).toContain(`oc_wait {"session_id":"${sessionId}"}`);
  expect((call.data.error as { name: string }).name).toBe("ServerUnreachable");
  expect(call.text).not.toMatch(/never will|recorded no end/);
  return sessionId;
}

async function stopUnderTurns(t: StoppedUnderTurn): Promise<void> {
  const { server, mcp } = t;
  const chats = () => server.model.requests.filter((r) => r.kind === "chat").length;
  // Both models answer only after the stop: whatever opencode does on SIGCONT, its model call is still open.
  server.model.queue(
    text("long wait finished after the stop", { delayMs: STOP_MS + 4_000 }),
    text("short wait finished after the stop", { delayMs: STOP_MS + 2_000 }),
  );
  const before = chats();
  const long = timed(() => mcp.call("oc_delegate", { task: "a turn that outlives a stop", timeout_s: 120 }, { timeoutMs: 200_000 }));
  await server.model.waitForRequests(before + 1, { kind: "chat" });
  const short = timed(() => mcp.call("oc_delegate", { task: "a short wait under a stop", timeout_s: 10 }, { timeoutMs: 200_000 }));
  await server.model.waitForRequests(before + 2, { kind: "chat" });

  process.kill(server.pid, "SIGSTOP");
  const stoppedAt = Date.now();
  let shortId: string;
  let longId: string;
  try {
    shortId = expectUnreachable(await short, 10);
    // A read without waiting is bounded too, and says the same.
    const read = await timed(() => mcp.call("oc_result", { session_id: shortId }));
    expect(read.call.data.state, read.call.text).toBe("unreachable");
    expect(read.call.data.status).toBe("unreachable");
    expect(read.ms).toBeLessThan(12_000 + MARGIN_MS);
    longId = expectUnreachable(await long, 120);
    expect(Date.now() - stoppedAt, "the long wait answered only after the stop").toBeLessThan(STOP_MS);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, STOP_MS - (Date.now() - stoppedAt))));
  } finally {
    process.kill(server.pid, "SIGCONT");
  }

  // opencode goes on: both turns finish, and a later wait says so, as opencode records it.
  for (const [sessionId, answer] of [
    [longId, "long wait finished after the stop"],
    [shortId, "short wait finished after the stop"],
  ] as const) {
    const waited = await mcp.call("oc_wait", { session_id: sessionId, timeout_s: 60 }, { timeoutMs: 90_000 });
    expect(waited.data.status, waited.text).toBe("done");
    expect(waited.data.answer).toBe(answer);
    expect(await t.recorded(sessionId)).toEqual({ finished: true, text: answer });
  }

  // Nothing ever said the turns would never end: not the task records, not the audit trail.
  const lines = (file: string) =>
    readFileSync(join(t.stateDir, file), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const ends = lines("tasks.jsonl").filter((r) => r.event === "end" && (r.session_id === longId || r.session_id === shortId));
  expect(ends.map((r) => r.status)).toEqual(["unreachable", "unreachable"]);
  const audited = lines("audit.jsonl").filter((r) => r.session_id === longId || r.session_id === shortId);
  expect(audited.length).toBeGreaterThan(0);
  expect(audited.map((r) => r.outcome)).not.toContain("lost");
}
