// Sub-agents on opencode 1.x: the delegated agent calls the `task` tool, which runs another agent in
// a child session (`parentID`: the delegated session) and waits for it. Compared with opencode's
// record, re-read from the server: the parent's messages, the child session and its messages, the
// open permission requests. A permission the sub-agent needs (`bash: ask`) is asked in the child
// session and blocks the parent's turn: delegate says `blocked` with it, and so does a conductor
// that attaches later and never saw the child created (before, it said `running` and listed nothing).
// A question the sub-agent asks (the `question` tool, which 1.x denies the `general` agent unless the
// config allows it, as here) is asked in the child session too and blocks the parent's turn the same
// way. A sub-agent whose model fails (HTTP 500, after opencode's retries) fails the parent's `task`
// call, and the parent goes on: its turn's outcome is the parent's, not the child's error.
// Facts: docs/opencode-behaviour.md §5.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Conductor } from "../../../src/core/conductor.js";
import type { PendingRequest } from "../../../src/core/model/pending-request.js";
import { useConductor } from "../../support/conductor.js";
import { COLOR_QUESTION } from "../../support/questions.js";
import { httpError, text, times, toolCall } from "../../support/scripted-model.js";

// `question: "allow"` lets the `general` sub-agent ask (1.x denies it to sub-agents by default).
const h = useConductor({ permission: { bash: "ask", question: "allow" } });

const taskCall = (description: string) => toolCall("task", { description, prompt: `${description}, then say so`, subagent_type: "general" });

/** opencode's record: the session's messages, and its one child session with its messages. */
async function recorded(sessionID: string) {
  const messages = await h.conductor.client.call("session.messages", { path: { sessionID } });
  const children = await h.conductor.client.call("session.children", { path: { sessionID } });
  expect(children).toHaveLength(1);
  const child = children[0]!;
  const childMessages = await h.conductor.client.call("session.messages", { path: { sessionID: child.id } });
  const replies = messages.flatMap((m) => (m.info.role === "assistant" ? [m.info] : []));
  const last = messages.at(-1)!;
  const lastText = last.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
  // `messageId` in our summary names the turn's prompt: the last user message.
  const prompt = messages.findLast((m) => m.info.role === "user")!.info.id;
  return { messages, replies, last, lastText, prompt, child, childMessages };
}

const tools = (messages: Awaited<ReturnType<typeof recorded>>["messages"]) =>
  messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" ? [[p.tool, p.state.status]] : [])));

describe("sub-agents on opencode 1.x (e2e)", () => {
  it("a sub-agent runs and finishes: answer, status and tokens are opencode's record of the parent's turn", async () => {
    h.oc.model.queue(taskCall("look around"), text("child says hi"), text("parent done"));
    const r = await h.conductor.delegate({ task: "use a sub-agent", timeoutMs: 60_000 });
    const rec = await recorded(r.sessionId);

    expect(rec.child.parentID).toBe(r.sessionId);
    expect(tools(rec.messages)).toEqual([["task", "completed"]]);
    expect(rec.last.info).toMatchObject({ role: "assistant", finish: "stop" });
    expect(rec.last.info.role === "assistant" && rec.last.info.error).toBeFalsy();
    expect(r).toMatchObject({ status: "done", answer: rec.lastText, messageId: rec.prompt });
    // The parent's own replies, not the child's (opencode keeps those on the child session).
    const sum = (f: (t: (typeof rec.replies)[number]["tokens"]) => number) => rec.replies.reduce((n, m) => n + f(m.tokens), 0);
    expect(r.tokens).toMatchObject({ input: sum((t) => t.input), output: sum((t) => t.output), total: sum((t) => t.total ?? 0) });
    expect(rec.childMessages.at(-1)!.parts).toContainEqual(expect.objectContaining({ type: "text", text: "child says hi" }));
  });

  it("a permission the sub-agent asks for blocks the parent's turn, for delegate and for a conductor attaching later; answered, the turn ends done", async () => {
    h.oc.model.queue(
      taskCall("write a marker"),
      toolCall("bash", { command: "echo child > child.txt", description: "marker" }),
      text("child wrote it"),
      text("parent done"),
    );
    const r = await h.conductor.delegate({ task: "have a sub-agent write a marker", timeoutMs: 60_000 });
    const [children, asked] = await Promise.all([
      h.conductor.client.call("session.children", { path: { sessionID: r.sessionId } }),
      h.conductor.client.call("permission.list"),
    ]);
    // opencode asks in the child session; the parent's task call waits on it.
    expect(asked).toEqual([expect.objectContaining({ sessionID: children[0]!.id, permission: "bash", patterns: ["echo child > child.txt"] })]);
    const request = expect.objectContaining({ kind: "permission", id: asked[0]!.id, sessionId: children[0]!.id, permission: "bash" });
    expect(r).toMatchObject({ status: "blocked", pending: [request] });

    // A conductor that never saw the child created (another process, a restart) finds it from the request.
    const late = new Conductor({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory });
    try {
      expect(await late.pending({ sessionId: r.sessionId })).toEqual([request]);
      expect((await late.result(r.sessionId)).last).toMatchObject({ status: "blocked", pending: [request] });
      expect(await late.wait(r.sessionId, { timeoutMs: 20_000 })).toMatchObject({ status: "blocked", pending: [request] });
    } finally {
      late.close();
    }

    await h.conductor.answer({ requestId: asked[0]!.id, decision: "once" });
    const done = await h.conductor.wait(r.sessionId, { timeoutMs: 60_000 });
    const rec = await recorded(r.sessionId);
    expect(rec.last.info).toMatchObject({ role: "assistant", finish: "stop" });
    expect(done).toMatchObject({ status: "done", answer: rec.lastText, messageId: rec.prompt });
    expect(done.pending).toBeUndefined();
    expect(tools(rec.childMessages)).toEqual([["bash", "completed"]]);
    expect(await h.conductor.client.call("permission.list")).toEqual([]);
    expect(readFileSync(join(h.oc.directory, "child.txt"), "utf8")).toBe("child\n");
  });

  it("the approvals handler is given the sub-agent's request, answers it, and the turn ends done", async () => {
    h.oc.model.queue(
      taskCall("write another"),
      toolCall("bash", { command: "echo again > again.txt", description: "marker" }),
      text("child again"),
      text("parent again"),
    );
    const seen: PendingRequest[] = [];
    const r = await h.conductor.delegate({
      task: "have a sub-agent write another marker",
      timeoutMs: 60_000,
      onBlocked: async (request) => {
        seen.push(request);
        await h.conductor.answer({ requestId: request.id, decision: "once" });
        return "handled";
      },
    });
    const rec = await recorded(r.sessionId);
    expect(seen).toEqual([expect.objectContaining({ kind: "permission", sessionId: rec.child.id, permission: "bash", patterns: ["echo again > again.txt"] })]);
    expect(rec.last.info).toMatchObject({ role: "assistant", finish: "stop" });
    expect(r).toMatchObject({ status: "done", answer: rec.lastText, messageId: rec.prompt });
    expect(tools(rec.childMessages)).toEqual([["bash", "completed"]]);
  });

  it("a question the sub-agent asks blocks the parent's turn, for delegate and for a conductor attaching later; answered, the turn ends done", async () => {
    h.oc.model.queue(taskCall("ask the user"), toolCall("question", { questions: [COLOR_QUESTION] }), text("child heard Blue"), text("parent done"));
    const r = await h.conductor.delegate({ task: "have a sub-agent ask me a color", timeoutMs: 60_000 });
    const [children, asked] = await Promise.all([
      h.conductor.client.call("session.children", { path: { sessionID: r.sessionId } }),
      h.conductor.client.call("question.list"),
    ]);
    // opencode asks in the child session; the parent's task call waits on it.
    expect(asked).toEqual([expect.objectContaining({ sessionID: children[0]!.id, questions: [expect.objectContaining({ question: "Which color?" })] })]);
    const request = expect.objectContaining({
      kind: "question",
      id: asked[0]!.id,
      sessionId: children[0]!.id,
      questions: [expect.objectContaining({ question: "Which color?", options: COLOR_QUESTION.options })],
    });
    expect(r).toMatchObject({ status: "blocked", pending: [request] });

    // A conductor that never saw the child created (another process, a restart) finds it from the question.
    const late = new Conductor({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory });
    try {
      expect(await late.pending({ sessionId: r.sessionId })).toEqual([request]);
      expect((await late.result(r.sessionId)).last).toMatchObject({ status: "blocked", pending: [request] });
      expect(await late.wait(r.sessionId, { timeoutMs: 20_000 })).toMatchObject({ status: "blocked", pending: [request] });
    } finally {
      late.close();
    }

    await h.conductor.answer({ questionId: asked[0]!.id, answers: [["Blue"]] });
    const done = await h.conductor.wait(r.sessionId, { timeoutMs: 60_000 });
    const rec = await recorded(r.sessionId);
    expect(rec.last.info).toMatchObject({ role: "assistant", finish: "stop" });
    expect(done).toMatchObject({ status: "done", answer: rec.lastText, messageId: rec.prompt });
    expect(done.pending).toBeUndefined();
    expect(tools(rec.childMessages)).toEqual([["question", "completed"]]);
    // The answer reached the sub-agent as its tool result.
    const output = rec.childMessages.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" && p.state.status === "completed" ? [p.state.output] : [])));
    expect(output.join("")).toContain('"Which color?"="Blue"');
    expect(await h.conductor.client.call("question.list")).toEqual([]);
  });

  it("a sub-agent whose model fails (HTTP 500 after the retries): the parent's task call fails with the child's error, the parent goes on, and its turn ends as opencode recorded it", async () => {
    // The first call and opencode's 5 retries (§6), each answered 500 at once.
    h.oc.model.queue(taskCall("fail"), times(6, httpError(500, { retryAfterMs: 200 })), text("parent: the sub-agent failed"));
    const r = await h.conductor.delegate({ task: "use a sub-agent that fails", timeoutMs: 60_000 });
    const rec = await recorded(r.sessionId);
    const childReply = rec.childMessages.at(-1)!.info;
    expect(childReply).toMatchObject({ role: "assistant", error: { name: "APIError", data: { statusCode: 500 } } });
    const childError = childReply.role === "assistant" ? childReply.error!.data.message : "";
    const task = rec.messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" && p.tool === "task" ? [p.state] : [])));
    expect(task).toEqual([expect.objectContaining({ status: "error", error: expect.stringContaining(String(childError)) })]);
    expect(rec.last.info).toMatchObject({ role: "assistant", finish: "stop" });
    expect(rec.last.info.role === "assistant" && rec.last.info.error).toBeFalsy();
    expect(r).toMatchObject({ status: "done", answer: rec.lastText, messageId: rec.prompt, tools: [{ tool: "task", status: "error" }] });
    expect(r.error).toBeUndefined();
  });
});
