// The rest of the tool surface over stdio with the SDK's Client, against real opencode + the scripted
// model: the compact tools/list, oc_ask, oc_api_ops, oc_send (queue and steer, then oc_wait),
// opencode.json-style `rules`, a question refused through oc_answer, and lenient number bounds.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS_LIST_BUDGET_CHARS } from "../../../src/mcp/listing/budget.js";
import { startMcpFor, type McpSession } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { text, toolCall } from "../../support/scripted-model.js";
import { COLOR_QUESTION } from "../../support/questions.js";

let server: TestOpencode;
let mcp: McpSession;

beforeAll(async () => {
  server = await startOpencode({ permission: { bash: "ask" } });
  mcp = await startMcpFor(server, { OPENCODE_CONDUCTOR_APPROVALS: "return" });
});
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
});

/** The user messages the model saw last in a session's newest request. */
function lastUserText(sessionId: string): string {
  const request = server.model.requestsFor(sessionId).at(-1);
  const users = (request?.body.messages ?? []).filter((m) => m.role === "user");
  return JSON.stringify(users.at(-1)?.content ?? "");
}

describe("MCP tools over stdio", () => {
  it(`lists the default tools within ${TOOLS_LIST_BUDGET_CHARS} characters, without $schema noise`, async () => {
    const { tools } = await mcp.client.listTools();
    const json = JSON.stringify({ tools });
    expect(tools).toHaveLength(16);
    expect(json.length).toBeLessThanOrEqual(TOOLS_LIST_BUDGET_CHARS);
    expect(json).not.toContain("$schema");
    expect(json).not.toContain("taskSupport");
  });

  it("oc_ask answers read-only and deletes its session", async () => {
    server.model.queue(text("It is a tiny project."));
    const before = await mcp.call("oc_sessions", { limit: 500 });
    const r = await mcp.call("oc_ask", { question: "What is this project?" });
    expect(r.isError, r.text).toBe(false);
    expect(r.data.answer).toBe("It is a tiny project.");
    const after = await mcp.call("oc_sessions", { limit: 500 });
    expect((after.data.sessions as unknown[]).length).toBe((before.data.sessions as unknown[]).length);
  });

  it("oc_api_ops finds operations and shows one operation's input schema; oc_api refuses a WebSocket route", async () => {
    const found = await mcp.call("oc_api_ops", { search: "session messages" });
    expect(found.isError, found.text).toBe(false);
    expect((found.data.operations as Array<{ id: string }>).map((o) => o.id)).toContain("session.messages");
    const one = await mcp.call("oc_api_ops", { operation: "session.prompt" });
    expect(one.isError, one.text).toBe(false);
    expect(JSON.stringify(one.data.operation)).toContain("parts");
    const terminal = await mcp.call("oc_api", { method: "GET", path: "/pty/pty_x/connect" });
    expect(terminal.isError).toBe(true);
    expect(terminal.text).toContain("pty.connect opens a WebSocket");
  });

  it("oc_send steers a running turn and queues a follow-up; oc_wait returns each result", async () => {
    // Queued before the delegation: opencode may ask the model before oc_delegate has answered, and
    // a request with nothing queued gets the scripted model's default reply at once.
    server.model.queue(text("too slow", { delayMs: 30_000 }), text("Steered: doing the new plan."), text("Queued one done."));
    const started = await mcp.call("oc_delegate", { task: "Start something long", wait: false });
    const sessionId = started.data.session_id as string;
    await server.model.waitForRequests(1, { sessionId, kind: "chat" });

    const steered = await mcp.call("oc_send", { session_id: sessionId, message: "Change of plan", delivery: "steer" });
    expect(steered.isError, steered.text).toBe(false);
    expect(steered.text).toContain("oc_wait");
    const afterSteer = await mcp.call("oc_wait", { session_id: sessionId });
    expect(afterSteer.data.status, afterSteer.text).toBe("done");
    expect(afterSteer.data.answer).toBe("Steered: doing the new plan.");
    expect(lastUserText(sessionId)).toContain("Change of plan");

    // Waiting is oc_wait's job: an argument oc_send does not take is refused, not silently dropped.
    const unknown = await mcp.call("oc_send", { session_id: sessionId, message: "x", wait: true });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toBe(
      "Invalid input to oc_send: oc_send does not take `wait`. Its arguments: session_id, message, delivery, model, agent, request_id.",
    );

    const queued = await mcp.call("oc_send", { session_id: sessionId, message: "One more thing" });
    expect(queued.isError, queued.text).toBe(false);
    const afterQueue = await mcp.call("oc_wait", { session_id: sessionId });
    expect(afterQueue.data.answer, afterQueue.text).toBe("Queued one done.");
  });

  it("rules in opencode.json's shape allow some commands and deny others; the last match wins", async () => {
    const kept = join(server.directory, "kept.txt");
    server.model.queue(
      toolCall("bash", { command: `echo kept > ${kept}`, description: "write" }),
      toolCall("bash", { command: `rm ${kept}`, description: "remove" }),
      text("Tried both."),
    );
    const r = await mcp.call("oc_delegate", { task: "Write, then remove", rules: { bash: { "*": "allow", "rm *": "deny" } } });
    expect(r.data.status, r.text).toBe("done");
    expect(readFileSync(kept, "utf8").trim()).toBe("kept");
    const bash = (r.data.tools as Array<{ tool: string; status: string }>).filter((t) => t.tool === "bash").map((t) => t.status);
    expect(bash).toEqual(["completed", "error"]);

    const bad = await mcp.call("oc_delegate", { task: "x", rules: { bash: "maybe" } });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('"bash"');
    expect(bad.text).toContain('"allow", "deny", "ask"');
  });

  it("oc_answer dismisses a question with decision reject; opencode then ends the turn", async () => {
    const questions = [COLOR_QUESTION];
    server.model.queue(toolCall("question", { questions }));
    const blocked = await mcp.call("oc_delegate", { task: "Pick a color" });
    expect(blocked.data.status, blocked.text).toBe("blocked");
    const id = (blocked.data.pending as Array<{ id: string }>)[0]!.id;
    expect(blocked.text).toContain('"decision": "reject"');
    const refused = await mcp.call("oc_answer", { request_id: id, decision: "reject" });
    expect(refused.isError, refused.text).toBe(false);
    expect(refused.data.reply).toBe("rejected");
    // docs/opencode-behaviour.md §5: a dismissed question is a tool error and the loop stops; nothing more is asked of the model.
    // opencode records no error, but the agent did not finish: the turn is interrupted by the tool.
    const done = await mcp.call("oc_wait", { session_id: blocked.data.session_id });
    expect(done.data.status, done.text).toBe("interrupted");
    expect(done.data.error).toEqual({ name: "ToolStopped", message: "The user dismissed this question" });
    expect(done.data.tools).toEqual([expect.objectContaining({ tool: "question", status: "error" })]);
    expect(server.model.requestsFor(blocked.data.session_id as string).filter((q) => q.kind === "chat")).toHaveLength(1);
  });

  it("brings out-of-range numbers into range instead of refusing them", async () => {
    server.model.queue(text("Quick."));
    const r = await mcp.call("oc_delegate", { task: "Quick one", timeout_s: 1e9, max_rounds: 99 });
    expect(r.isError, r.text).toBe(false);
    expect(r.data.status).toBe("done");
    // A negative wait becomes the shortest one: an idle session answers at once.
    const again = await mcp.call("oc_wait", { session_id: r.data.session_id, timeout_s: -5 });
    expect(again.isError, again.text).toBe(false);
    expect(again.data.answer).toBe("Quick.");
  });
});
