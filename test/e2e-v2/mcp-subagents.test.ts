// A permission a sub-agent asks for, through the built MCP server over stdio on the opencode 2.x
// pre-release: the delegated agent calls `subagent`, the sub-agent runs in a child session
// (`parentID`: the delegated session) and its `shell` call asks there. A client without elicitation
// (`return`) gets BLOCKED naming the child's request, answers it with oc_answer and gets done from
// oc_wait; another MCP server process that never saw the child created lists it and waits on it as
// blocked too. A client that declares elicitation gets the child's request as a form and the call
// ends done. A question the sub-agent asks (the `question` tool, a form on 2.x; the config allows
// it to the `general` agent, which 2.x otherwise denies) goes the same way: BLOCKED with the child's
// question, listed and waited on as blocked by the other process, answered with oc_answer's labels.
// Every outcome is compared with opencode's record, re-read from the server. Facts:
// docs/opencode-2x-behaviour.md ("A blocked turn").
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { connectV2, type OpencodeV2Client } from "../../src/client/v2/index.js";
import { FormAnswers } from "../support/form-answers.js";
import { startMcp, startMcpFor, type McpSession } from "../support/mcp-client.js";
import { startOpencode2, type V2Message } from "../support/opencode2.js";
import { COLOUR_QUESTION } from "../support/questions.js";
import type { TestOpencode } from "../support/opencode.js";
import { text, toolCall } from "../support/scripted-model.js";

let server: TestOpencode;
let v2: OpencodeV2Client;
let plain: McpSession; // declares no elicitation: approvals come back as BLOCKED
let human: McpSession; // declares form elicitation: its user answers the forms
const person = new FormAnswers();

beforeAll(async () => {
  // `question: "allow"` lets the `general` sub-agent ask (2.x denies it to that agent by default).
  server = await startOpencode2({ permission: { shell: "ask", question: "allow" } });
  v2 = await connectV2({ url: server.url, password: server.password });
  const env = { OPENCODE_URL: server.url, OPENCODE_PASSWORD: server.password, OPENCODE_CONDUCTOR_DIRECTORY: server.directory };
  [plain, human] = await Promise.all([startMcpFor(server), startMcp(env, { elicitation: { form: {} } })]);
  person.attach(human.client);
});
// A test that failed must not leave its script to the next one.
beforeEach(() => server.model.clear());
afterAll(async () => {
  await plain?.close();
  await human?.close();
  await server?.stop();
});

const subagentCall = (description: string) => toolCall("subagent", { agent: "general", description, prompt: `${description}, then say so` });
const messagesOf = async (sessionID: string) =>
  ((await v2.request("session.messages", { path: { sessionID }, query: { order: "asc", limit: "200" } })) as { data: V2Message[] }).data;
const permissionsOf = async (sessionID: string) =>
  ((await v2.request("permission.list", { path: { sessionID } })) as { data: Array<{ id: string; sessionID: string; action: string }> }).data;
const formsOf = async (sessionID: string) =>
  ((await v2.request("form.list", { path: { sessionID } })) as { data: Array<{ id: string; sessionID: string; metadata?: unknown }> }).data;

/** opencode's record: the session's one child session, the parent's last message and the child's tools. */
async function recorded(sessionID: string) {
  const children = ((await v2.request("session.list", { query: { parentID: sessionID } })) as { data: Array<{ id: string }> }).data;
  expect(children).toHaveLength(1);
  const child = children[0]!;
  const last = (await messagesOf(sessionID)).at(-1)!;
  const lastText = (last.content ?? []).flatMap((c) => (c.type === "text" ? [c.text ?? ""] : [])).join("");
  const childParts = (await messagesOf(child.id)).flatMap((m) => (m.content ?? []).filter((c) => c.type === "tool"));
  const childTools = childParts.map((c) => [c.name, c.state?.status]);
  return { child, last, lastText, childTools, childParts };
}

type Pending = { kind: string; id: string; session_id: string; permission?: string; patterns?: string[]; questions?: unknown[] };

describe("a sub-agent's permission through the MCP server on opencode 2.x", () => {
  it("return: oc_delegate says blocked with the child's request, another server process lists it and waits on it as blocked, oc_answer approves, oc_wait says done", async () => {
    server.model.queue(
      subagentCall("write a marker"),
      toolCall("shell", { command: "echo child > mcp-child.txt" }),
      text("child wrote it"),
      text("parent done"),
    );
    const r = await plain.call("oc_delegate", { task: "have a sub-agent write a marker" });
    expect(r.isError, r.text).toBe(false);
    const sessionId = r.data.session_id as string;
    const { child } = await recorded(sessionId);
    // opencode asks in the child session; the parent has none of its own, its subagent call waits.
    const asked = await permissionsOf(child.id);
    expect(asked).toEqual([expect.objectContaining({ sessionID: child.id, action: "shell" })]);
    expect(await permissionsOf(sessionId)).toEqual([]);
    expect(r.data.status, r.text).toBe("blocked");
    const pending = r.data.pending as Pending[];
    expect(pending).toEqual([
      expect.objectContaining({ kind: "permission", id: asked[0]!.id, session_id: child.id, permission: "shell", patterns: ["echo child > mcp-child.txt"] }),
    ]);
    expect(r.text).toContain(`oc_answer {"request_id":"${asked[0]!.id}","decision":"once"}`);

    // The other MCP server process never saw the child created: it finds the request all the same.
    const listed = await human.call("oc_pending", { session_id: sessionId });
    expect(listed.isError, listed.text).toBe(false);
    expect(listed.data.requests).toEqual([expect.objectContaining({ id: asked[0]!.id, session_id: child.id, what: "shell" })]);
    const late = await human.call("oc_wait", { session_id: sessionId, approvals: "return", timeout_s: 20 });
    expect(late.data, late.text).toMatchObject({ status: "blocked", pending });

    const answered = await plain.call("oc_answer", { request_id: asked[0]!.id, decision: "once" });
    expect(answered.isError, answered.text).toBe(false);
    const done = await plain.call("oc_wait", { session_id: sessionId, timeout_s: 60 });
    const rec = await recorded(sessionId);
    expect(rec.last).toMatchObject({ type: "assistant", finish: "stop" });
    expect(done.data, done.text).toMatchObject({ status: "done", answer: rec.lastText });
    expect(done.data.pending).toBeUndefined();
    expect(rec.childTools).toEqual([["shell", "completed"]]);
    expect(await permissionsOf(child.id)).toEqual([]);
    expect(readFileSync(join(server.directory, "mcp-child.txt"), "utf8")).toBe("child\n");
  });

  it("elicit: the child's request reaches the client as a form; accepted, oc_delegate ends done", async () => {
    server.model.queue(subagentCall("write another"), toolCall("shell", { command: "echo again > mcp-again.txt" }), text("child again"), text("parent again"));
    const before = person.forms.length;
    person.reply = () => ({ action: "accept", content: { decision: "once" } });
    const r = await human.call("oc_delegate", { task: "have a sub-agent write another marker" });
    expect(r.isError, r.text).toBe(false);
    const rec = await recorded(r.data.session_id as string);
    expect(person.forms.length - before).toBe(1);
    expect(person.forms.at(-1)!.message).toContain(`session ${rec.child.id}`);
    expect(person.forms.at(-1)!.message).toContain("echo again > mcp-again.txt");
    expect(rec.last).toMatchObject({ type: "assistant", finish: "stop" });
    expect(r.data, r.text).toMatchObject({ status: "done", answer: rec.lastText });
    expect(r.data.refused_approvals).toBeUndefined();
    expect(rec.childTools).toEqual([["shell", "completed"]]);
    expect(readFileSync(join(server.directory, "mcp-again.txt"), "utf8")).toBe("again\n");
  });

  it("return: a question the sub-agent asks makes oc_delegate say blocked with it, another server process lists it and waits on it as blocked, oc_answer's labels reach the sub-agent, oc_wait says done", async () => {
    server.model.queue(subagentCall("ask the user"), toolCall("question", { questions: [COLOUR_QUESTION] }), text("child heard blue"), text("parent done"));
    const r = await plain.call("oc_delegate", { task: "have a sub-agent ask me a colour" });
    expect(r.isError, r.text).toBe(false);
    const sessionId = r.data.session_id as string;
    const { child } = await recorded(sessionId);
    // opencode asks in the child session (a form); the parent has none of its own, its subagent call waits.
    const asked = await formsOf(child.id);
    expect(asked).toEqual([expect.objectContaining({ sessionID: child.id, metadata: expect.objectContaining({ kind: "question" }) })]);
    expect(await formsOf(sessionId)).toEqual([]);
    expect(r.data.status, r.text).toBe("blocked");
    const pending = r.data.pending as Pending[];
    expect(pending).toEqual([
      expect.objectContaining({
        kind: "question",
        id: asked[0]!.id,
        session_id: child.id,
        questions: [expect.objectContaining({ question: "Which colour?", header: "Colour", options: COLOUR_QUESTION.options })],
      }),
    ]);
    expect(r.text).toContain(`oc_answer {"request_id":"${asked[0]!.id}","answers":[["red"]]}`);

    // The other MCP server process never saw the child created: it finds the question all the same.
    const listed = await human.call("oc_pending", { session_id: sessionId });
    expect(listed.isError, listed.text).toBe(false);
    expect(listed.data.requests).toEqual([
      expect.objectContaining({ kind: "question", id: asked[0]!.id, session_id: child.id, what: "Which colour?", options: ["red", "blue"] }),
    ]);
    const late = await human.call("oc_wait", { session_id: sessionId, approvals: "return", timeout_s: 20 });
    expect(late.data, late.text).toMatchObject({ status: "blocked", pending });

    const answered = await plain.call("oc_answer", { request_id: asked[0]!.id, answers: [["blue"]] });
    expect(answered.isError, answered.text).toBe(false);
    const done = await plain.call("oc_wait", { session_id: sessionId, timeout_s: 60 });
    const rec = await recorded(sessionId);
    expect(rec.last).toMatchObject({ type: "assistant", finish: "stop" });
    expect(done.data, done.text).toMatchObject({ status: "done", answer: rec.lastText });
    expect(done.data.pending).toBeUndefined();
    expect(rec.childTools).toEqual([["question", "completed"]]);
    expect(rec.childParts[0]).toMatchObject({ state: { metadata: { answers: [["blue"]] } } });
    expect(await formsOf(child.id)).toEqual([]);
  });
});
