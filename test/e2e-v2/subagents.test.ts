// Sub-agents on the opencode 2.x pre-release: the delegated agent calls the `subagent` tool (1.x's
// `task`; arguments agent, description, prompt), which runs another agent in a child session
// (`session.created` with `parentID`) and waits for it. Compared with opencode's record, re-read
// from the server: the parent's messages, the child session (`session.list` by `parentID`) and its
// messages, the open permission requests. A shell permission the sub-agent needs is asked in the
// child session and blocks the parent's turn: delegate says `blocked` with it, and so does a
// conductor that attaches later and never saw the child created (before, it said `running`).
// Facts: docs/opencode-2x-behaviour.md ("A blocked turn").
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import type { PendingRequest } from "../../src/core/model/pending-request.js";
import { startV2Fixture, type V2Fixture } from "../support/opencode2.js";
import { text, toolCall } from "../support/scripted-model.js";

let v2: V2Fixture;
let conductor: Conductor;
beforeAll(async () => {
  v2 = await startV2Fixture({ permission: { shell: "ask" } });
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
});
