// Blocked turns through the MCP server against a real opencode 2.x server: a permission (the
// server's config asks before every shell call) answered once or rejected, and a question (a form
// on 2.x) answered, each with oc_pending / oc_answer / oc_wait, compared with what the server
// recorded. Facts: docs/opencode-2x-behaviour.md ("A blocked turn").
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OpencodeV2Client } from "../../src/client/v2/index.js";
import type { McpSession } from "../support/mcp-client.js";
import { startMcpOnV2, type McpOnV2 } from "../support/mcp-v2.js";
import type { TestOpencode } from "../support/opencode.js";
import { text, toolCall } from "../support/scripted-model.js";
import { COLOUR_QUESTION } from "../support/questions.js";

let server: TestOpencode;
let mcp: McpSession;
let v2: OpencodeV2Client;
let recorded: McpOnV2["recorded"];
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ server, mcp, v2, recorded, stop } = await startMcpOnV2({ gitInit: true, permission: { shell: "ask" } }, { OPENCODE_CONDUCTOR_APPROVALS: "return" }));
});
// `return`: a blocked turn comes back BLOCKED at once (no MCP elicitation from this test client).
// A test that failed must not leave its script to the next one.
beforeEach(() => server.model.clear());
afterAll(() => stop?.());

type Pending = { kind: string; id: string; session_id: string; permission?: string; patterns?: string[]; questions?: unknown[] };

describe("a permission on opencode 2.x", () => {
  it("blocks the turn; oc_pending lists it; oc_answer once lets it run to done", async () => {
    server.model.queue(toolCall("shell", { command: "echo allowed > allowed.txt" }), text("ran it"));
    const r = await mcp.call("oc_delegate", { task: "run the command", title: "v2 permission" });
    expect(r.isError, r.text).toBe(false);
    expect(r.data.status).toBe("blocked");
    const id = r.data.session_id as string;
    const [request] = r.data.pending as Pending[];
    expect(request).toMatchObject({
      kind: "permission",
      id: expect.stringMatching(/^per_/),
      session_id: id,
      permission: "shell",
      patterns: ["echo allowed > allowed.txt"],
    });
    expect(existsSync(join(server.directory, "allowed.txt"))).toBe(false);
    // What the server lists as pending is what the tool showed.
    expect(await v2.request("permission.list", { path: { sessionID: id } })).toMatchObject({ data: [{ id: request!.id }] });

    const pending = await mcp.call("oc_pending", { session_id: id });
    expect(pending.isError, pending.text).toBe(false);
    expect(pending.text).toContain(request!.id);

    const answered = await mcp.call("oc_answer", { request_id: request!.id, decision: "once" });
    expect(answered.isError, answered.text).toBe(false);
    const waited = await mcp.call("oc_wait", { session_id: id, timeout_s: 60 });
    expect(waited.data).toMatchObject({ status: "done", answer: "ran it" });
    expect(readFileSync(join(server.directory, "allowed.txt"), "utf8")).toBe("allowed\n");
    expect((await recorded(id)).filter((m) => m.type === "assistant").at(-1)).toMatchObject({ finish: "stop" });
  });

  it("rejected: the turn ends interrupted (2.x ends it with reason shutdown), the command never ran", async () => {
    server.model.queue(toolCall("shell", { command: "echo no > rejected.txt" }), text("could not"));
    const r = await mcp.call("oc_delegate", { task: "run the other command", title: "v2 permission reject" });
    expect(r.data.status).toBe("blocked");
    const id = r.data.session_id as string;
    const [request] = r.data.pending as Pending[];
    await mcp.call("oc_answer", { request_id: request!.id, decision: "reject" });
    const waited = await mcp.call("oc_wait", { session_id: id, timeout_s: 60 });
    expect(waited.data).toMatchObject({ status: "interrupted", error: { name: "aborted" } });
    expect(existsSync(join(server.directory, "rejected.txt"))).toBe(false);
    const last = (await recorded(id)).at(-1)!;
    expect(last).toMatchObject({ type: "assistant", finish: "error", error: { type: "aborted" } });
  });
});

describe("a question on opencode 2.x", () => {
  it("is a form: shown as a question, answered with labels through oc_answer, the turn goes on to done", async () => {
    const question = COLOUR_QUESTION;
    server.model.queue(toolCall("question", { questions: [question] }), text("blue it is"));
    const r = await mcp.call("oc_delegate", { task: "ask me", title: "v2 question" });
    expect(r.data.status).toBe("blocked");
    const id = r.data.session_id as string;
    const [request] = r.data.pending as Pending[];
    expect(request).toMatchObject({
      kind: "question",
      id: expect.stringMatching(/^frm_/),
      questions: [{ question: "Which colour?", header: "Colour", options: [{ label: "red" }, { label: "blue" }] }],
    });

    const answered = await mcp.call("oc_answer", { request_id: request!.id, answers: [["blue"]] });
    expect(answered.isError, answered.text).toBe(false);
    const waited = await mcp.call("oc_wait", { session_id: id, timeout_s: 60 });
    expect(waited.data).toMatchObject({ status: "done", answer: "blue it is" });
    const toolStep = (await recorded(id)).find((m) => m.type === "assistant")!;
    expect(toolStep.content?.[0]).toMatchObject({ type: "tool", name: "question", state: { status: "completed", metadata: { answers: [["blue"]] } } });
  });
});
