// On a real opencode 2.x server, the summary delegate() returns at the outcome event is built from
// the turn's durable events (src/core/engine/v2/v2-seen-turn.ts), not from a read of the session, and
// it must equal the summary of the session as the server recorded it, re-read afterwards. Turns: a
// text answer, a write in a git project (the step's snapshot names the file), a failing tool then an
// answer, a failing model (HTTP 400), reasoning before an answer, a retried model call, and a
// continued session.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import { summarizeTurn, type TurnSummary } from "../../src/core/turns/summary.js";
import type { TestOpencode } from "../support/opencode.js";
import { startOpencode2 } from "../support/opencode2.js";
import { httpError, reasoning, text, toolCall, type Step } from "../support/scripted-model.js";

let server: TestOpencode;
let conductor: Conductor;
/** Sessions whose summary read the session from the server (engine.lastTurn). */
const read: string[] = [];

beforeAll(async () => {
  server = await startOpencode2({ gitInit: true });
  conductor = await Conductor.connect({ url: server.url, password: server.password, directory: server.directory });
  const engine = conductor.engine;
  const lastTurn = engine.lastTurn.bind(engine);
  engine.lastTurn = (id: string) => {
    read.push(id);
    return lastTurn(id);
  };
});
afterAll(async () => {
  conductor?.close();
  await server?.stop();
});

/** What a summary says that the server recorded (not the conductor's own bookkeeping). */
const recordedPart = (s: TurnSummary) => ({
  status: s.status,
  answer: s.answer,
  error: s.error,
  model: s.model,
  agent: s.agent,
  tools: s.tools,
  files: s.files,
  tokens: s.tokens,
  cost: s.cost,
  messageId: s.messageId,
});

async function delegate(steps: Step[], task: string, sessionId?: string) {
  server.model.queue(...steps);
  const summary = await conductor.delegate({ task, title: task, ...(sessionId ? { sessionId } : {}) });
  const messages = await conductor.engine.messages(summary.sessionId);
  const reread = summarizeTurn({ sessionId: summary.sessionId, messages, outcome: "idle", pending: [] });
  return { summary, reread };
}

describe("2.x summaries from the turn's events", () => {
  it.each([
    ["a text answer", () => [text("hello from events")], "done"],
    // Inside the project: a path outside it would ask for permission first.
    ["a failing tool, then an answer", () => [toolCall("read", { path: join(server.directory, "missing.txt") }), text("could not read it")], "done"],
    ["a failing model (HTTP 400)", () => [httpError(400)], "error"],
  ] as Array<[string, () => Step[], string]>)("%s: equal to the re-read, and the session was not read for it", async (task, steps, status) => {
    const { summary, reread } = await delegate(steps(), task);
    expect(summary.status).toBe(status);
    expect(recordedPart(summary)).toEqual(recordedPart(reread));
    expect(read).not.toContain(summary.sessionId);
  });

  it("a write in a git project: the file is named from the step's events, as the server recorded it", async () => {
    const file = join(server.directory, "from-events.txt");
    const { summary, reread } = await delegate([toolCall("write", { path: file, content: "x\n" }), text("wrote it")], "write");
    expect(summary.status).toBe("done");
    expect(summary.files?.map((f) => f.path)).toContain("from-events.txt");
    expect(recordedPart(summary)).toEqual(recordedPart(reread));
    expect(read).not.toContain(summary.sessionId);
  });

  it("a continued session: only the new turn is summarised, from its events", async () => {
    const first = await delegate([text("first answer")], "first");
    const second = await delegate([text("second answer")], "second", first.summary.sessionId);
    expect(second.summary).toMatchObject({ status: "done", answer: "second answer" });
    expect(recordedPart(second.summary)).toEqual(recordedPart(second.reread));
    expect(read).not.toContain(first.summary.sessionId);
  });

  it("reasoning before the answer", async () => {
    const { summary, reread } = await delegate([reasoning("thinking it over", "the answer")], "reasoning");
    expect(summary).toMatchObject({ status: "done", answer: "the answer" });
    expect(recordedPart(summary)).toEqual(recordedPart(reread));
    expect(read).not.toContain(summary.sessionId);
  });

  it("a retried model call (HTTP 500, then an answer): the retry restarts the same message", async () => {
    const { summary, reread } = await delegate([httpError(500), text("after the retry")], "retry");
    expect(summary).toMatchObject({ status: "done", answer: "after the retry" });
    expect(recordedPart(summary)).toEqual(recordedPart(reread));
    expect(read).not.toContain(summary.sessionId);
  });
});
