// The turn summary on messages recorded from real opencode 1.18.33 runs (the e2e core tests write
// them with OCC_DUMP_MESSAGES=1; the temp root is scrubbed to /tmp/occ).
import type { PendingRequest } from "../../../src/core/model/pending-request.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lastTurn, recordedVerdict, summarizeTurn, turnOf } from "../../../src/core/turns/summary.js";
import { loadFixture } from "../../support/fixture.js";
import type { Message } from "../../../src/core/model/message.js";

const load = (name: string): Message[] => JSON.parse(readFileSync(join(import.meta.dirname, `../../fixtures/1.18.33/messages-${name}.json`), "utf8"));
const S = "ses_x";
const userId = (messages: Message[]) => messages.findLast((m) => m.info.role === "user")!.info.id;

describe("summarizeTurn on recorded turns", () => {
  it("a write turn in a git project: answer, tools, files (tool + patch parts), tokens summed over steps, model", () => {
    const messages = load("write-git");
    const s = summarizeTurn({ sessionId: S, messages, outcome: "idle" });
    const steps = messages.slice(1).map((m) => (m.info.role === "assistant" ? m.info.tokens : undefined)!);
    expect(s).toEqual({
      sessionId: S,
      status: "done",
      answer: "I wrote hello.txt.",
      model: "fake/scripted",
      agent: "build",
      tools: [{ tool: "write", status: "completed", title: "hello.txt" }],
      files: [{ path: "hello.txt" }],
      tokens: {
        input: steps.reduce((n, t) => n + t.input, 0),
        output: steps.reduce((n, t) => n + t.output, 0),
        reasoning: 0,
        cacheRead: 0,
        cacheWrite: 0,
        total: steps.reduce((n, t) => n + t.total!, 0),
      },
      cost: 0,
      messageId: userId(messages),
    });
  });

  it("prefers the turn's diff (paths relative to the worktree root) over the tool calls", () => {
    const diff = [{ file: "hello.txt", patch: "", additions: 1, deletions: 0, status: "added" as const }];
    const s = summarizeTurn({ sessionId: S, messages: load("write-git"), outcome: "idle", diff });
    expect(s.files).toEqual([{ path: "hello.txt", status: "added", additions: 1, deletions: 0 }]);
  });

  it("a write turn without git: files from the tool call, relative to the session directory", () => {
    const s = summarizeTurn({ sessionId: S, messages: load("write-plain"), outcome: "idle" });
    expect(s).toMatchObject({ status: "done", answer: "Noted.", files: [{ path: "note.txt" }] });
  });

  it("keeps files outside the session directory absolute, and adds files seen edited while watching", () => {
    const s = summarizeTurn({ sessionId: S, messages: load("write-plain"), outcome: "idle", filesEdited: ["/elsewhere/x.txt", "/tmp/occ/plain/sub/y.txt"] });
    expect(s.files).toEqual([{ path: "/elsewhere/x.txt" }, { path: "note.txt" }, { path: "sub/y.txt" }]);
  });

  it("a model error (HTTP 400): status error with name and message, no answer", () => {
    const s = summarizeTurn({ sessionId: S, messages: load("error-400"), outcome: "idle" });
    expect(s).toMatchObject({ status: "error", answer: "", error: { name: "APIError", message: "Bad request" }, tools: [], files: [] });
  });

  it("an aborted turn is interrupted, as its message records", () => {
    const messages = load("interrupted");
    expect(summarizeTurn({ sessionId: S, messages, outcome: "idle" })).toMatchObject({ status: "interrupted", error: { name: "MessageAbortedError" } });
  });

  it("a turn waiting on a question: blocked with the request, or running when the wait timed out", () => {
    const messages = load("question-blocked");
    const pending: PendingRequest[] = [
      { kind: "question", id: "que_1", sessionId: S, questions: [{ question: "Which color?", options: [{ label: "Blue" }] }] },
    ];
    expect(summarizeTurn({ sessionId: S, messages, outcome: "blocked", pending })).toMatchObject({
      status: "blocked",
      pending,
      tools: [{ tool: "question", status: "running" }],
    });
    expect(summarizeTurn({ sessionId: S, messages, outcome: "timeout" })).toMatchObject({ status: "running", answer: "" });
  });

  it("two queued turns: the summary is the last one's; `full` adds its transcript", () => {
    const messages = load("queued");
    const s = summarizeTurn({ sessionId: S, messages, outcome: "idle", detail: "full" });
    expect(s).toMatchObject({ status: "done", answer: "second answer", messageId: userId(messages) });
    expect(s.transcript).toEqual([
      { role: "user", text: "second task" },
      { role: "assistant", text: "second answer" },
    ]);
  });

  it("the turn a verdict judged, named by its user message: that turn's answer and id, though a queued turn follows it", () => {
    const messages = load("queued");
    const first = messages[0]!.info.id;
    expect(summarizeTurn({ sessionId: S, messages, outcome: "idle", verdict: { status: "done" }, turn: first })).toMatchObject({
      status: "done",
      answer: "first answer",
      messageId: first,
    });
    expect(recordedVerdict(messages, first)).toEqual({ status: "done" });
    // A turn the messages do not hold: the last turn, as before.
    expect(summarizeTurn({ sessionId: S, messages, outcome: "idle", turn: "msg_absent" })).toMatchObject({ answer: "second answer" });
  });

  it("a turn opencode compacted midway (recorded): one turn, answered by the reply after the compaction, its spend summed", () => {
    const fixture = loadFixture("compaction-turn");
    const messages = fixture.interactions.findLast((i) => i.operationId === "session.messages")!.body as Message[];
    const prompt = messages[0]!;
    const last = messages.at(-1)!;
    const spent = messages.reduce((sum, m) => sum + (m.info.role === "assistant" ? (m.info.tokens.total ?? 0) : 0), 0);
    const s = summarizeTurn({ sessionId: S, messages, outcome: "idle" });
    expect(s).toMatchObject({ status: "done", answer: "All done after the compaction.", messageId: prompt.info.id, agent: "build" });
    expect(last.info.role === "assistant" && last.info.parentID).not.toBe(prompt.info.id); // it answers opencode's Continue
    expect(s.tools).toEqual([{ tool: "bash", status: "completed", title: "echo compacted" }]);
    expect(s.tokens?.total).toBe(spent);
    expect(lastTurn(messages).user?.info.id).toBe(prompt.info.id);
    expect(turnOf(messages, prompt.info.id)?.compactions.map((m) => m.info.id)).toEqual(
      messages.filter((m) => m.info.role === "assistant" && m.info.summary === true).map((m) => m.info.id),
    );
  });

  it("`final` is the answer only", () => {
    expect(summarizeTurn({ sessionId: S, messages: load("write-git"), outcome: "idle", detail: "final" })).toEqual({
      sessionId: S,
      status: "done",
      answer: "I wrote hello.txt.",
    });
  });

  it("the turn machine's verdict wins over a read of the messages (an error that left no reply)", () => {
    const messages = load("error-400").slice(0, 1);
    const verdict = { status: "error" as const, error: { name: "UnknownError", message: "Model not found: fake/nope." } };
    expect(summarizeTurn({ sessionId: S, messages, outcome: "idle", verdict })).toMatchObject({
      status: "error",
      error: verdict.error,
      model: "fake/scripted",
    });
  });
});

describe("lastTurn and recordedVerdict", () => {
  it("finds the last user message and its replies", () => {
    const messages = load("queued");
    const { user, replies } = lastTurn(messages);
    expect(user?.info.id).toBe(messages[2]!.info.id);
    expect(replies.map((m) => m.info.id)).toEqual([messages[3]!.info.id]);
  });

  it("reads the outcome an idle session recorded, or nothing while the last reply is not terminal", () => {
    expect(recordedVerdict(load("queued"))).toEqual({ status: "done" });
    expect(recordedVerdict(load("error-400"))).toMatchObject({ status: "error", error: { name: "APIError", statusCode: 400 } });
    expect(recordedVerdict(load("interrupted"))).toMatchObject({ status: "interrupted", error: { name: "MessageAbortedError" } });
    expect(recordedVerdict(load("question-blocked"))).toBeUndefined(); // the assistant is still running
    // A user message nobody answered, on an idle session: opencode recorded no end.
    expect(recordedVerdict(load("queued").slice(0, 3))).toMatchObject({ status: "lost" });
    // No message at all (a prompt opencode dropped before recording it): no outcome to claim.
    expect(recordedVerdict([])).toMatchObject({ status: "lost", error: { name: "TurnLost" } });
  });
});
