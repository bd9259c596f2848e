// Sub-agents on the opencode 2.x pre-release: the delegated agent calls the `subagent` tool (1.x's
// `task`; arguments agent, description, prompt), which runs another agent in a child session
// (`session.created` with `parentID`) and waits for it. Compared with opencode's record, re-read
// from the server: the parent's messages, the child session (`session.list` by `parentID`) and its
// messages, the open permission requests. A shell permission the sub-agent needs is asked in the
// child session and blocks the parent's turn: delegate says `blocked` with it, and so does a
// conductor that attaches later and never saw the child created (before, it said `running`). A
// question the sub-agent asks (the `question` tool, a form on 2.x, which the `general` agent is denied
// unless the config allows it, as here) is asked in the child session too and blocks the parent's
// turn the same way. A sub-agent whose model fails (HTTP 500, after 2.x's retries) fails the
// parent's `subagent` call, and the parent goes on: its execution's outcome is the parent's, not the
// child's failure. Facts: docs/opencode-2x-behaviour.md ("A blocked turn").
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import type { PendingRequest } from "../../src/core/model/pending-request.js";
import { startV2Fixture, type V2Fixture } from "../support/opencode2.js";
import { COLOUR_QUESTION } from "../support/questions.js";
import { httpError, text, times, toolCall } from "../support/scripted-model.js";

let v2: V2Fixture;
let conductor: Conductor;
beforeAll(async () => {
  // `question: "allow"` lets the `general` sub-agent ask (2.x denies it to that agent by default).
  v2 = await startV2Fixture({ permission: { shell: "ask", question: "allow" } });
  conductor = await Conductor.connect({ url: v2.server.url, password: v2.server.password, directory: v2.server.directory });
});
afterAll(async () => {
  conductor?.close();
  await v2?.stop();
});

const subagentCall = (description: string) => toolCall("subagent", { agent: "general", description, prompt: `${description}, then say so` });

type V2Session = { id: string; parentID?: string };
type V2Tokens = { input: number; output: number; reasoning: number; cache: { read: number; write: number } };

/** opencode's record: the session's messages, and its one child session with its messages. */
async function recorded(sessionID: string) {
  const messages = await v2.messages(sessionID);
  const children = ((await v2.client.request("session.list", { query: { parentID: sessionID } })) as { data: V2Session[] }).data;
  expect(children).toHaveLength(1);
  const child = children[0]!;
  const replies = messages.filter((m) => m.type === "assistant");
  const last = messages.at(-1)!;
  const lastText = (last.content ?? []).flatMap((c) => (c.type === "text" ? [c.text ?? ""] : [])).join("");
  const prompt = messages.findLast((m) => m.type === "user")!.id;
  return { messages, replies, last, lastText, prompt, child, childMessages: await v2.messages(child.id) };
}

const tools = (messages: Awaited<ReturnType<typeof recorded>>["messages"]) =>
  messages.flatMap((m) => (m.content ?? []).flatMap((c) => (c.type === "tool" ? [[c.name, c.state?.status]] : [])));

const permissionsOf = async (sessionID: string) =>
  ((await v2.client.request("permission.list", { path: { sessionID } })) as { data: Array<{ id: string }> }).data;
const formsOf = async (sessionID: string) =>
  ((await v2.client.request("form.list", { path: { sessionID } })) as { data: Array<{ id: string; sessionID: string; metadata?: unknown }> }).data;

describe("sub-agents on opencode 2.x", () => {
  it("a sub-agent runs and finishes: answer, status and tokens are opencode's record of the parent's turn", async () => {
    v2.server.model.queue(subagentCall("look around"), text("child says hi"), text("parent done"));
    const r = await conductor.delegate({ task: "use a sub-agent", timeoutMs: 60_000 });
    const rec = await recorded(r.sessionId);

    expect(rec.child.parentID).toBe(r.sessionId);
    expect(tools(rec.messages)).toEqual([["subagent", "completed"]]);
    expect(rec.last).toMatchObject({ type: "assistant", finish: "stop" });
    expect(rec.last.error).toBeUndefined();
    expect(r).toMatchObject({ status: "done", answer: rec.lastText, messageId: rec.prompt });
    // The parent's own steps, not the child's (opencode keeps those on the child session).
    const sum = (f: (t: V2Tokens) => number) => rec.replies.reduce((n, m) => n + f(m.tokens as V2Tokens), 0);
    expect(r.tokens).toMatchObject({ input: sum((t) => t.input), output: sum((t) => t.output) });
    expect(rec.childMessages.at(-1)).toMatchObject({ type: "assistant", finish: "stop" });
    expect(rec.childMessages.at(-1)!.content).toContainEqual(expect.objectContaining({ type: "text", text: "child says hi" }));
  });

  it("a permission the sub-agent asks for blocks the parent's turn, for delegate and for a conductor attaching later; answered, the turn ends done", async () => {
    v2.server.model.queue(
      subagentCall("write a marker"),
      toolCall("shell", { command: "echo child > child.txt" }),
      text("child wrote it"),
      text("parent done"),
    );
    const r = await conductor.delegate({ task: "have a sub-agent write a marker", timeoutMs: 60_000 });
    const { child } = await recorded(r.sessionId);
    // opencode asks in the child session; the parent has none of its own, its subagent call waits.
    const asked = await permissionsOf(child.id);
    expect(asked).toEqual([expect.objectContaining({ sessionID: child.id, action: "shell" })]);
    expect(await permissionsOf(r.sessionId)).toEqual([]);
    const request = expect.objectContaining({ kind: "permission", id: asked[0]!.id, sessionId: child.id, permission: "shell" });
    expect(r).toMatchObject({ status: "blocked", pending: [request] });

    // A conductor that never saw the child created (another process, a restart) finds it from the request.
    const late = await Conductor.connect({ url: v2.server.url, password: v2.server.password, directory: v2.server.directory });
    try {
      expect(await late.pending({ sessionId: r.sessionId })).toEqual([request]);
      expect((await late.result(r.sessionId)).last).toMatchObject({ status: "blocked", pending: [request] });
      expect(await late.wait(r.sessionId, { timeoutMs: 20_000 })).toMatchObject({ status: "blocked", pending: [request] });
    } finally {
      late.close();
    }

    await conductor.answer({ requestId: asked[0]!.id, decision: "once" });
    const done = await conductor.wait(r.sessionId, { timeoutMs: 60_000 });
    const rec = await recorded(r.sessionId);
    expect(rec.last).toMatchObject({ type: "assistant", finish: "stop" });
    expect(done).toMatchObject({ status: "done", answer: rec.lastText, messageId: rec.prompt });
    expect(done.pending).toBeUndefined();
    expect(tools(rec.childMessages)).toEqual([["shell", "completed"]]);
    expect(await permissionsOf(child.id)).toEqual([]);
    expect(readFileSync(join(v2.server.directory, "child.txt"), "utf8")).toBe("child\n");
  });

  it("the approvals handler is given the sub-agent's request, answers it, and the turn ends done", async () => {
    v2.server.model.queue(subagentCall("write another"), toolCall("shell", { command: "echo again > again.txt" }), text("child again"), text("parent again"));
    const seen: PendingRequest[] = [];
    const r = await conductor.delegate({
      task: "have a sub-agent write another marker",
      timeoutMs: 60_000,
      onBlocked: async (request) => {
        seen.push(request);
        await conductor.answer({ requestId: request.id, decision: "once" });
        return "handled";
      },
    });
    const rec = await recorded(r.sessionId);
    expect(seen).toEqual([expect.objectContaining({ kind: "permission", sessionId: rec.child.id, permission: "shell", patterns: ["echo again > again.txt"] })]);
    expect(rec.last).toMatchObject({ type: "assistant", finish: "stop" });
    expect(r).toMatchObject({ status: "done", answer: rec.lastText, messageId: rec.prompt });
    expect(tools(rec.childMessages)).toEqual([["shell", "completed"]]);
  });

  it("a question the sub-agent asks blocks the parent's turn, for delegate and for a conductor attaching later; answered, the turn ends done", async () => {
    v2.server.model.queue(subagentCall("ask the user"), toolCall("question", { questions: [COLOUR_QUESTION] }), text("child heard blue"), text("parent done"));
    const r = await conductor.delegate({ task: "have a sub-agent ask me a colour", timeoutMs: 60_000 });
    const { child } = await recorded(r.sessionId);
    // opencode asks in the child session (a form); the parent has none of its own, its subagent call waits.
    const asked = await formsOf(child.id);
    expect(asked).toEqual([expect.objectContaining({ sessionID: child.id, metadata: expect.objectContaining({ kind: "question" }) })]);
    expect(await formsOf(r.sessionId)).toEqual([]);
    const request = expect.objectContaining({
      kind: "question",
      id: asked[0]!.id,
      sessionId: child.id,
      questions: [expect.objectContaining({ question: "Which colour?", header: "Colour", options: COLOUR_QUESTION.options })],
    });
    expect(r).toMatchObject({ status: "blocked", pending: [request] });

    // A conductor that never saw the child created (another process, a restart) finds it from the form.
    const late = await Conductor.connect({ url: v2.server.url, password: v2.server.password, directory: v2.server.directory });
    try {
      expect(await late.pending({ sessionId: r.sessionId })).toEqual([request]);
      expect((await late.result(r.sessionId)).last).toMatchObject({ status: "blocked", pending: [request] });
      expect(await late.wait(r.sessionId, { timeoutMs: 20_000 })).toMatchObject({ status: "blocked", pending: [request] });
    } finally {
      late.close();
    }

    await conductor.answer({ questionId: asked[0]!.id, answers: [["blue"]] });
    const done = await conductor.wait(r.sessionId, { timeoutMs: 60_000 });
    const rec = await recorded(r.sessionId);
    expect(rec.last).toMatchObject({ type: "assistant", finish: "stop" });
    expect(done).toMatchObject({ status: "done", answer: rec.lastText, messageId: rec.prompt });
    expect(done.pending).toBeUndefined();
    expect(tools(rec.childMessages)).toEqual([["question", "completed"]]);
    // The answer reached the sub-agent as its tool result.
    const question = rec.childMessages.flatMap((m) => (m.content ?? []).filter((c) => c.type === "tool"))[0];
    expect(question).toMatchObject({ name: "question", state: { status: "completed", metadata: { answers: [["blue"]] } } });
    expect(await formsOf(child.id)).toEqual([]);
  });

  it("a sub-agent whose model fails (HTTP 500 after the retries): the parent's subagent call fails with the child's error, the parent goes on, and its turn ends as opencode recorded it", async () => {
    // The first call and 2.x's 4 retries (about 30 s of backoff), each answered 500.
    v2.server.model.queue(subagentCall("fail"), times(5, httpError(500)), text("parent: the sub-agent failed"));
    const from = v2.log.events.length;
    const r = await conductor.delegate({ task: "use a sub-agent that fails", timeoutMs: 90_000 });
    const rec = await recorded(r.sessionId);
    const childReply = rec.childMessages.at(-1)!;
    expect(childReply).toMatchObject({ type: "assistant", finish: "error", error: { type: "provider.internal", status: 500 } });
    // The child's execution failed, the parent's succeeded.
    const outcomes = (sessionID: string) =>
      v2.log.of(sessionID, from).flatMap((e) => (e.type.startsWith("session.execution.") && e.type !== "session.execution.started" ? [e.type] : []));
    expect(outcomes(rec.child.id)).toEqual(["session.execution.failed"]);
    expect(outcomes(r.sessionId)).toEqual(["session.execution.succeeded"]);
    const call = rec.messages.flatMap((m) => (m.content ?? []).filter((c) => c.type === "tool" && c.name === "subagent"));
    expect(call).toEqual([expect.objectContaining({ state: expect.objectContaining({ status: "error" }) })]);
    expect(JSON.stringify(call[0]!.state)).toContain("HTTP 500");
    expect(rec.last).toMatchObject({ type: "assistant", finish: "stop" });
    expect(rec.last.error).toBeUndefined();
    expect(r).toMatchObject({ status: "done", answer: rec.lastText, messageId: rec.prompt, tools: [{ tool: "subagent", status: "error" }] });
    expect(r.error).toBeUndefined();
  }, 120_000);
});
