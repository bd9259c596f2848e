// Approvals of a 2026-07-28 client (no server-to-client requests): a permission or question that
// stops a delegated turn comes back as an `input_required` round with the same form a 2025-11-25
// client gets through elicitation; the SDK client asks its handler and sends the call again with the
// answer, and the call goes on with the same session. Through the built server over stdio against
// real opencode and the scripted model; each outcome is compared with the session opencode recorded,
// and the audit says who answered.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { auditLines, FormAnswers } from "../../support/form-answers.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/connect.js";
import { FASTEST_HUMAN_MS } from "../../../src/mcp/elicit.js";
import { startMcp, type McpSession } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { COLOR_QUESTION } from "../../support/questions.js";
import { text, toolCall, type ScriptedRequest } from "../../support/scripted-model.js";
import { readMessages } from "../../support/turns.js";

let server: TestOpencode;
let human: McpSession; // declares form elicitation: its user answers forms
let plain: McpSession; // declares none
let stateDir: string;
/** Who answers the human client's forms. */
const person = new FormAnswers();

const env = () => ({
  OPENCODE_URL: server.url,
  OPENCODE_PASSWORD: server.password,
  OPENCODE_CONDUCTOR_DIRECTORY: server.directory,
  OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
});

const audit = () => auditLines(stateDir);
const oc = () => connect({ url: server.url, password: server.password, directory: server.directory });
const sent = (r: ScriptedRequest | undefined) => JSON.stringify(r?.body.messages ?? []);
const toolPart = async (sessionId: string, tool: string) =>
  (await readMessages(oc(), sessionId)).flatMap((m) => m.parts).find((p) => p.type === "tool" && p.tool === tool);

beforeAll(async () => {
  server = await startOpencode({ permission: { bash: "ask" } });
  stateDir = join(server.root, "state");
  [human, plain] = await Promise.all([startMcp(env(), { elicitation: { form: {} } }, { era: "modern" }), startMcp(env(), {}, { era: "modern" })]);
  person.attach(human.client);
});
afterAll(async () => {
  await human?.close();
  await plain?.close();
  await server?.stop();
});

describe("approvals on 2026-07-28 (input_required)", () => {
  it("both clients negotiated 2026-07-28", () => {
    expect(human.client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(plain.client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
  });

  it("asks through an input_required round with today's form; `once` runs the command in the same session and the turn ends done", async () => {
    const marker = join(server.directory, "round-once.txt");
    server.model.queue(toolCall("bash", { command: `echo approved > ${marker}`, description: "write marker" }), text("Done after approval."));
    person.reply = () => ({ action: "accept", content: { decision: "once" } });
    const r = await human.call("oc_delegate", { task: "Run the command", permissions: "agent" });
    expect(r.data.status, r.text).toBe("done");
    expect(r.data.answer).toBe("Done after approval.");
    expect(readFileSync(marker, "utf8").trim()).toBe("approved");
    const form = person.forms.at(-1)!;
    expect(form.message).toContain(`echo approved > ${marker}`);
    expect((form as { requestedSchema: { properties: Record<string, { enum?: string[] }> } }).requestedSchema.properties.decision!.enum).toEqual([
      "once",
      "always",
      "reject",
    ]);
    // opencode recorded one session whose bash ran once, after the answer.
    const bash = await toolPart(r.data.session_id as string, "bash");
    expect(bash?.type === "tool" && bash.state.status).toBe("completed");
    const lines = audit().filter((e) => e.session_id === r.data.session_id);
    // The call that asked, the human's answer, the call that went on with the same session.
    expect(lines.map((e) => [e.tool, e.outcome, e.by])).toEqual([
      ["oc_delegate", "input_required", undefined],
      ["oc_delegate", "ok", "human"],
      ["oc_delegate", "done", undefined],
    ]);
    expect(lines[0]!.detail.asked).toEqual([expect.stringMatching(/^per_/)]);
    expect(lines[1]).toMatchObject({ decision: "once", client: { name: "e2e-test-client" }, detail: { permission: "bash", action: "accept" } });
    expect(lines[2]).toMatchObject({ detail: { resumed_round: 1 } });
  });

  it("a delegation with checks runs them after the round, on what the approved command wrote", async () => {
    const marker = join(server.directory, "round-checked.txt");
    server.model.queue(toolCall("bash", { command: `echo checked > ${marker}`, description: "write marker" }), text("Wrote it."));
    person.reply = () => ({ action: "accept", content: { decision: "once" } });
    const r = await human.call("oc_delegate", { task: "Write the checked marker", permissions: "agent", checks: [`test -f ${marker}`] });
    expect(r.data.status, r.text).toBe("done");
    expect(r.data.checks).toEqual([expect.objectContaining({ round: 1, command: `test -f ${marker}`, passed: true, exit: 0 })]);
  });

  it("a person's decline rejects the request; the agent is told and the turn ends", async () => {
    const marker = join(server.directory, "round-declined.txt");
    server.model.queue(toolCall("bash", { command: `echo no > ${marker}`, description: "write marker" }), text("Understood, skipped it."));
    person.slowNext = FASTEST_HUMAN_MS + 300;
    person.reply = () => ({ action: "decline" });
    const r = await human.call("oc_delegate", { task: "Run the other command", permissions: "agent" });
    expect(r.data.status, r.text).toBe("done");
    expect(existsSync(marker)).toBe(false);
    expect(sent(server.model.lastRequest({ sessionId: r.data.session_id as string, kind: "chat" }))).toContain("The user declined this request.");
    expect(audit().find((e) => e.by === "human" && e.session_id === r.data.session_id)).toMatchObject({ decision: "reject", detail: { action: "decline" } });
    expect(r.data.refused_approvals).toEqual([expect.objectContaining({ by: "human", outcome: "rejected", action: "decline", kind: "permission" })]);
  });

  for (const action of ["cancel", "decline"] as const) {
    it(`a client that answers "${action}" at once gets BLOCKED with the oc_answer call, audited by "client"; the request stays pending`, async () => {
      const marker = join(server.directory, `round-${action}.txt`);
      server.model.queue(toolCall("bash", { command: `echo headless > ${marker}`, description: "write marker" }), text("Written after approval."));
      const asked = person.forms.length;
      person.reply = () => ({ action });
      const r = await human.call("oc_delegate", { task: `Write the ${action} marker`, permissions: "agent" });
      const sessionId = r.data.session_id as string;
      expect(person.forms.length).toBe(asked + 1); // asked once, not again in the same call
      expect(r.data.status, r.text).toBe("blocked");
      const pending = r.data.pending as Array<{ id: string }>;
      expect(r.text).toContain(`oc_answer {"request_id":"${pending[0]!.id}","decision":"once"}`);
      expect(r.data.refused_approvals).toEqual([expect.objectContaining({ request_id: pending[0]!.id, by: "client", outcome: "returned", action })]);
      expect(audit().filter((e) => e.session_id === sessionId && e.decision === "returned")).toEqual([
        expect.objectContaining({ by: "client", outcome: "returned", detail: expect.objectContaining({ request_id: pending[0]!.id, action }) }),
      ]);
      expect((await oc().call("permission.list")).map((p) => p.id)).toContain(pending[0]!.id);
      const bash = await toolPart(sessionId, "bash");
      expect(bash?.type === "tool" && bash.state.status).toBe("running");
      // The calling model decides, as on 2025-11-25.
      person.reply = () => {
        throw new Error("no form expected after oc_answer");
      };
      expect((await human.call("oc_answer", { request_id: pending[0]!.id, decision: "once" })).isError).toBe(false);
      const done = await human.call("oc_wait", { session_id: sessionId });
      expect(done.data.status, done.text).toBe("done");
      expect(readFileSync(marker, "utf8").trim()).toBe("headless");
    });
  }

  it("a question comes as a form with its choices; the chosen label is the answer opencode records", async () => {
    server.model.queue(toolCall("question", { questions: [COLOR_QUESTION] }), text("Blue it is."));
    person.reply = (params) => {
      const props = (params as { requestedSchema: { properties: Record<string, { enum?: string[] }> } }).requestedSchema.properties;
      expect(props.q1!.enum).toEqual(COLOR_QUESTION.options.map((o) => o.label));
      return { action: "accept", content: { q1: COLOR_QUESTION.options[1]!.label } };
    };
    const r = await human.call("oc_delegate", { task: "Ask me a colour", permissions: "agent" });
    expect(r.data.status, r.text).toBe("done");
    const question = await toolPart(r.data.session_id as string, "question");
    expect(JSON.stringify(question?.type === "tool" && question.state)).toContain(COLOR_QUESTION.options[1]!.label);
  });

  it("a client that declares no elicitation gets BLOCKED at once, no round", async () => {
    server.model.queue(toolCall("bash", { command: "echo blocked", description: "echo" }), text("Went on without it."));
    const r = await plain.call("oc_delegate", { task: "Run echo", permissions: "agent" });
    expect(r.data.status, r.text).toBe("blocked");
    expect(audit().some((e) => e.session_id === r.data.session_id && e.outcome === "input_required")).toBe(false);
    const pending = r.data.pending as { id: string }[];
    await plain.call("oc_answer", { request_id: pending[0]!.id, decision: "reject", message: "not now" });
    expect((await plain.call("oc_wait", { session_id: r.data.session_id })).data.status).toBe("done");
  });

  it("two tasks of a batch that both ask are asked in one round; each answer reaches its session", async () => {
    const files = ["batch-a.txt", "batch-b.txt"].map((f) => join(server.directory, f));
    server.model.queue(
      toolCall("bash", { command: `echo a > ${files[0]}`, description: "a" }),
      toolCall("bash", { command: `echo b > ${files[1]}`, description: "b" }),
      text("Wrote it."),
      text("Wrote it."),
    );
    const before = person.forms.length;
    person.reply = () => ({ action: "accept", content: { decision: "once" } });
    const r = await human.call("oc_delegate_parallel", { tasks: [{ task: "write a" }, { task: "write b" }] });
    const results = r.data.results as Array<{ status: string; session_id: string }>;
    expect(
      results.map((t) => t.status),
      r.text,
    ).toEqual(["done", "done"]);
    expect(person.forms.length - before).toBe(2);
    for (const f of files) expect(existsSync(f)).toBe(true);
    for (const t of results) {
      const bash = await toolPart(t.session_id, "bash");
      expect(bash?.type === "tool" && bash.state.status).toBe("completed");
    }
    const asked = audit().filter((e) => e.tool === "oc_delegate_parallel" && e.outcome === "input_required");
    expect(asked.at(-1)!.detail.asked).toHaveLength(2);
  });

  it("a requestState that this server did not sign is refused before anything runs", async () => {
    const sessionsBefore = (await oc().call("session.list")).length;
    await expect(
      human.client.request({ method: "tools/call", params: { name: "oc_delegate", arguments: { task: "x" }, requestState: "forged" } }),
    ).rejects.toThrow(/Invalid or expired requestState/);
    expect((await oc().call("session.list")).length).toBe(sessionsBefore);
  });
});
