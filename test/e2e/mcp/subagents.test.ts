// A permission a sub-agent asks for, through the built MCP server over stdio on opencode 1.x: the
// delegated agent calls `task`, the sub-agent runs in a child session (`parentID`: the delegated
// session) and its `bash` call asks there. A client without elicitation (`return`) gets BLOCKED
// naming the child's request, answers it with oc_answer and gets done from oc_wait; another MCP
// server process that never saw the child created lists it and waits on it as blocked too. A client that declares elicitation
// gets the child's request as a form and the call ends done. A question the sub-agent asks (the
// `question` tool; the config allows it to the `general` agent, which 1.x otherwise denies) goes the
// same way: BLOCKED with the child's question, listed and waited on as blocked by the other process,
// answered with oc_answer's labels. Every outcome is compared with opencode's record, re-read from
// the server. Facts: docs/opencode-behaviour.md §5.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/connect.js";
import { auditLines, FormAnswers } from "../../support/form-answers.js";
import { startMcpFor, startMcp, type McpSession } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { COLOR_QUESTION } from "../../support/questions.js";
import { text, toolCall } from "../../support/scripted-model.js";

let server: TestOpencode;
let plain: McpSession; // declares no elicitation: approvals come back as BLOCKED
let human: McpSession; // declares form elicitation: its user answers the forms
let stateDir: string;
const person = new FormAnswers();

beforeAll(async () => {
  // `question: "allow"` lets the `general` sub-agent ask (1.x denies it to sub-agents by default).
  server = await startOpencode({ permission: { bash: "ask", question: "allow" } });
  stateDir = join(server.root, "state");
  const env = { OPENCODE_URL: server.url, OPENCODE_PASSWORD: server.password, OPENCODE_CONDUCTOR_DIRECTORY: server.directory };
  [plain, human] = await Promise.all([startMcpFor(server), startMcp({ ...env, OPENCODE_CONDUCTOR_STATE_DIR: stateDir }, { elicitation: { form: {} } })]);
  person.attach(human.client);
});
// A test that failed must not leave its script to the next one.
beforeEach(() => server.model.clear());
afterAll(async () => {
  await plain?.close();
  await human?.close();
  await server?.stop();
});

const oc = () => connect({ url: server.url, password: server.password, directory: server.directory });
const taskCall = (description: string) => toolCall("task", { description, prompt: `${description}, then say so`, subagent_type: "general" });

/** opencode's record: the session's messages, its one child session and the child's messages. */
async function recorded(sessionID: string) {
  const client = oc();
  const messages = await client.call("session.messages", { path: { sessionID } });
  const children = await client.call("session.children", { path: { sessionID } });
  expect(children).toHaveLength(1);
  const child = children[0]!;
  const childMessages = await client.call("session.messages", { path: { sessionID: child.id } });
  const last = messages.at(-1)!;
  const lastText = last.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
  const childTools = childMessages.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" ? [[p.tool, p.state.status]] : [])));
  const childOutput = childMessages
    .flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" && p.state.status === "completed" ? [p.state.output] : [])))
    .join("");
  return { last, lastText, child, childTools, childOutput };
}

type Pending = { kind: string; id: string; session_id: string; permission?: string; patterns?: string[]; questions?: unknown[]; answer_with: string };

describe("a sub-agent's permission through the MCP server on opencode 1.x", () => {
  it("return: oc_delegate says blocked with the child's request, another server process lists it and waits on it as blocked, oc_answer approves, oc_wait says done", async () => {
    server.model.queue(
      taskCall("write a marker"),
      toolCall("bash", { command: "echo child > mcp-child.txt", description: "marker" }),
      text("child wrote it"),
      text("parent done"),
    );
    const r = await plain.call("oc_delegate", { task: "have a sub-agent write a marker" });
    expect(r.isError, r.text).toBe(false);
    const sessionId = r.data.session_id as string;
    const [children, asked] = await Promise.all([oc().call("session.children", { path: { sessionID: sessionId } }), oc().call("permission.list")]);
    // opencode asks in the child session; the parent's task call waits on it.
    expect(asked).toEqual([expect.objectContaining({ sessionID: children[0]!.id, permission: "bash", patterns: ["echo child > mcp-child.txt"] })]);
    expect(r.data.status, r.text).toBe("blocked");
    const pending = r.data.pending as Pending[];
    expect(pending).toEqual([
      expect.objectContaining({
        kind: "permission",
        id: asked[0]!.id,
        session_id: children[0]!.id,
        permission: "bash",
        patterns: ["echo child > mcp-child.txt"],
      }),
    ]);
    expect(r.text).toContain(`oc_answer {"request_id":"${asked[0]!.id}","decision":"once"}`);

    // The other MCP server process never saw the child created: it finds the request all the same.
    const listed = await human.call("oc_pending", { session_id: sessionId });
    expect(listed.isError, listed.text).toBe(false);
    expect(listed.data.requests).toEqual([expect.objectContaining({ id: asked[0]!.id, session_id: children[0]!.id, what: "bash" })]);
    const late = await human.call("oc_wait", { session_id: sessionId, approvals: "return", timeout_s: 20 });
    expect(late.data, late.text).toMatchObject({ status: "blocked", pending: pending });

    const answered = await plain.call("oc_answer", { request_id: asked[0]!.id, decision: "once" });
    expect(answered.isError, answered.text).toBe(false);
    const done = await plain.call("oc_wait", { session_id: sessionId, timeout_s: 60 });
    const rec = await recorded(sessionId);
    expect(rec.last.info).toMatchObject({ role: "assistant", finish: "stop" });
    expect(done.data, done.text).toMatchObject({ status: "done", answer: rec.lastText });
    expect(done.data.pending).toBeUndefined();
    expect(rec.childTools).toEqual([["bash", "completed"]]);
    expect(await oc().call("permission.list")).toEqual([]);
    expect(readFileSync(join(server.directory, "mcp-child.txt"), "utf8")).toBe("child\n");
  });

  it("elicit: the child's request reaches the client as a form; accepted, oc_delegate ends done", async () => {
    server.model.queue(
      taskCall("write another"),
      toolCall("bash", { command: "echo again > mcp-again.txt", description: "marker" }),
      text("child again"),
      text("parent again"),
    );
    const before = person.forms.length;
    person.reply = () => ({ action: "accept", content: { decision: "once" } });
    const r = await human.call("oc_delegate", { task: "have a sub-agent write another marker" });
    expect(r.isError, r.text).toBe(false);
    const sessionId = r.data.session_id as string;
    const rec = await recorded(sessionId);
    expect(person.forms.length - before).toBe(1);
    const form = person.forms.at(-1)!;
    expect(form.message).toContain(`session ${rec.child.id}`);
    expect(form.message).toContain("echo again > mcp-again.txt");
    expect(rec.last.info).toMatchObject({ role: "assistant", finish: "stop" });
    expect(r.data, r.text).toMatchObject({ status: "done", answer: rec.lastText });
    expect(r.data.refused_approvals).toBeUndefined();
    expect(rec.childTools).toEqual([["bash", "completed"]]);
    expect(readFileSync(join(server.directory, "mcp-again.txt"), "utf8")).toBe("again\n");
    // Audited as the person's answer, in the child session it was asked in.
    expect(auditLines(stateDir).filter((e) => e.by === "human")).toEqual([
      expect.objectContaining({ session_id: rec.child.id, decision: "once", outcome: "ok", detail: expect.objectContaining({ permission: "bash" }) }),
    ]);
  });

  it("return: a question the sub-agent asks makes oc_delegate say blocked with it, another server process lists it and waits on it as blocked, oc_answer's labels reach the sub-agent, oc_wait says done", async () => {
    server.model.queue(taskCall("ask the user"), toolCall("question", { questions: [COLOR_QUESTION] }), text("child heard Blue"), text("parent done"));
    const r = await plain.call("oc_delegate", { task: "have a sub-agent ask me a color" });
    expect(r.isError, r.text).toBe(false);
    const sessionId = r.data.session_id as string;
    const [children, asked] = await Promise.all([oc().call("session.children", { path: { sessionID: sessionId } }), oc().call("question.list")]);
    // opencode asks in the child session; the parent's task call waits on it.
    expect(asked).toEqual([expect.objectContaining({ sessionID: children[0]!.id, questions: [expect.objectContaining({ question: "Which color?" })] })]);
    expect(r.data.status, r.text).toBe("blocked");
    const pending = r.data.pending as Pending[];
    expect(pending).toEqual([
      expect.objectContaining({
        kind: "question",
        id: asked[0]!.id,
        session_id: children[0]!.id,
        questions: [expect.objectContaining({ question: "Which color?", options: COLOR_QUESTION.options })],
      }),
    ]);
    expect(r.text).toContain(`oc_answer {"request_id":"${asked[0]!.id}","answers":[["Red"]]}`);

    // The other MCP server process never saw the child created: it finds the question all the same.
    const listed = await human.call("oc_pending", { session_id: sessionId });
    expect(listed.isError, listed.text).toBe(false);
    expect(listed.data.requests).toEqual([
      expect.objectContaining({ kind: "question", id: asked[0]!.id, session_id: children[0]!.id, what: "Which color?", options: ["Red", "Blue"] }),
    ]);
    const late = await human.call("oc_wait", { session_id: sessionId, approvals: "return", timeout_s: 20 });
    expect(late.data, late.text).toMatchObject({ status: "blocked", pending });

    const answered = await plain.call("oc_answer", { request_id: asked[0]!.id, answers: [["Blue"]] });
    expect(answered.isError, answered.text).toBe(false);
    const done = await plain.call("oc_wait", { session_id: sessionId, timeout_s: 60 });
    const rec = await recorded(sessionId);
    expect(rec.last.info).toMatchObject({ role: "assistant", finish: "stop" });
    expect(done.data, done.text).toMatchObject({ status: "done", answer: rec.lastText });
    expect(done.data.pending).toBeUndefined();
    expect(rec.childTools).toEqual([["question", "completed"]]);
    expect(rec.childOutput).toContain('"Which color?"="Blue"');
    expect(await oc().call("question.list")).toEqual([]);
  });
});
