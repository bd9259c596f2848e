// Governance end to end (issue 7), through the built MCP server over stdio against real opencode and
// the scripted model: approvals asked of the human by elicitation (or denied, or returned as
// BLOCKED), gates of checks with fix rounds, budgets, idempotent starts across restarts, and the
// audit trail they leave.
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { auditLines, FormAnswers } from "../../support/form-answers.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/connect.js";
import { FASTEST_HUMAN_MS } from "../../../src/mcp/elicit.js";
import { startMcp, type McpSession, type ToolCall } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { text, toolCall, type ScriptedRequest } from "../../support/scripted-model.js";
import { readMessages } from "../../support/turns.js";

let server: TestOpencode;
let human: McpSession; // declares elicitation: its user answers forms
let plain: McpSession; // no elicitation
let stateDir: string;
/** Who answers the human client's forms. */
const person = new FormAnswers();
const outputs: ToolCall[] = [];

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    OPENCODE_URL: server.url,
    OPENCODE_PASSWORD: server.password,
    OPENCODE_CONDUCTOR_DIRECTORY: server.directory,
    OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
    ...extra,
  };
}

async function call(mcp: McpSession, tool: string, args: Record<string, unknown>): Promise<ToolCall> {
  const r = await mcp.call(tool, args);
  outputs.push(r);
  return r;
}

/** What opencode sent the model in a request (messages, tool results included). */
const sent = (r: ScriptedRequest | undefined) => JSON.stringify(r?.body.messages ?? []);

const audit = () => auditLines(stateDir);

beforeAll(async () => {
  server = await startOpencode({ permission: { bash: "ask" } });
  stateDir = join(server.root, "state");
  [human, plain] = await Promise.all([startMcp(env(), { elicitation: {} }), startMcp(env())]);
  person.attach(human.client);
});
afterAll(async () => {
  await human?.close();
  await plain?.close();
  await server?.stop();
});

describe("approvals", () => {
  it("asks the human through elicitation; `once` runs the command and the turn ends done, no oc_answer", async () => {
    const marker = join(server.directory, "elicit-once.txt");
    server.model.queue(toolCall("bash", { command: `echo approved > ${marker}`, description: "write marker" }), text("Done after approval."));
    person.reply = () => ({ action: "accept", content: { decision: "once" } });
    const r = await call(human, "oc_delegate", { task: "Run the command", permissions: "agent" });
    expect(r.data.status, r.text).toBe("done");
    expect(r.data.answer).toBe("Done after approval.");
    expect(readFileSync(marker, "utf8").trim()).toBe("approved");
    const form = person.forms.at(-1)!;
    expect(form.message).toContain(`echo approved > ${marker}`);
    expect(form.message).toContain("bash");
    expect((form as { requestedSchema: { properties: Record<string, { enum?: string[] }> } }).requestedSchema.properties.decision!.enum).toEqual([
      "once",
      "always",
      "reject",
    ]);
    const approval = audit().find((e) => e.by === "human" && e.decision === "once");
    expect(approval).toMatchObject({
      tool: "oc_delegate",
      session_id: r.data.session_id,
      outcome: "ok",
      client: { name: "e2e-test-client" },
      detail: { permission: "bash", action: "accept" },
    });
  });

  it("a person's decline rejects the request with the reason; the agent is told and the turn ends", async () => {
    const marker = join(server.directory, "elicit-declined.txt");
    server.model.queue(toolCall("bash", { command: `echo no > ${marker}`, description: "write marker" }), text("Understood, skipped it."));
    // A person reads the form before declining (a faster decline is the client's own, see below).
    person.slowNext = FASTEST_HUMAN_MS + 300;
    person.reply = () => ({ action: "decline" });
    const r = await call(human, "oc_delegate", { task: "Run the other command", permissions: "agent" });
    expect(r.data.status, r.text).toBe("done");
    expect(r.data.answer).toBe("Understood, skipped it.");
    expect(existsSync(marker)).toBe(false);
    expect(sent(server.model.lastRequest({ sessionId: r.data.session_id as string, kind: "chat" }))).toContain("The user declined this request.");
    expect(audit().find((e) => e.by === "human" && e.session_id === r.data.session_id)).toMatchObject({ decision: "reject", detail: { action: "decline" } });
    expect(r.data.refused_approvals).toEqual([expect.objectContaining({ by: "human", outcome: "rejected", action: "decline", kind: "permission" })]);
    expect(r.text).toContain("Approvals not given during this call:");
  });

  // Headless clients declare elicitation with nobody there: `claude -p` cancels every form within
  // milliseconds, `codex exec` declines it. Neither may become a silent rejection.
  for (const action of ["cancel", "decline"] as const) {
    it(`a client that answers every form "${action}" at once gets BLOCKED with the oc_answer call, reported and audited by "client"`, async () => {
      const marker = join(server.directory, `headless-${action}.txt`);
      server.model.queue(toolCall("bash", { command: `echo headless > ${marker}`, description: "write marker" }), text("Written after approval."));
      const asked = person.forms.length;
      person.reply = () => ({ action });
      const r = await call(human, "oc_delegate", { task: `Write the ${action} marker`, permissions: "agent" });
      const sessionId = r.data.session_id as string;
      expect(person.forms.length).toBe(asked + 1);
      expect(r.data.status, r.text).toBe("blocked");
      const pending = r.data.pending as Array<{ id: string; answer_with: string }>;
      expect(pending).toHaveLength(1);
      expect(r.text).toContain(`oc_answer {"request_id":"${pending[0]!.id}","decision":"once"}`);
      expect(r.data.refused_approvals).toEqual([
        expect.objectContaining({ request_id: pending[0]!.id, session_id: sessionId, kind: "permission", by: "client", outcome: "returned", action }),
      ]);
      expect(r.text).toContain(
        `Approvals not given during this call:\n- permission bash: echo headless > ${marker}: the client ${action === "cancel" ? "cancelled" : "declined"} the form in `,
      );
      expect(audit().filter((e) => e.session_id === sessionId && e.decision === "returned")).toEqual([
        expect.objectContaining({
          tool: "oc_delegate",
          by: "client",
          outcome: "returned",
          detail: expect.objectContaining({ request_id: pending[0]!.id, action, permission: "bash" }),
        }),
      ]);

      // opencode agrees: the request is still open, nothing ran, and the session waits on it.
      const oc = connect({ url: server.url, password: server.password, directory: server.directory });
      expect((await oc.call("permission.list")).map((p) => p.id)).toContain(pending[0]!.id);
      expect(existsSync(marker)).toBe(false);
      const bash = (await readMessages(oc, sessionId)).flatMap((m) => m.parts).find((p) => p.type === "tool" && p.tool === "bash");
      expect(bash?.type === "tool" && bash.state.status).toBe("running");

      // The calling model decides: once → the command runs and the turn ends done.
      person.reply = () => {
        throw new Error("no form expected after oc_answer");
      };
      expect((await call(human, "oc_answer", { request_id: pending[0]!.id, decision: "once" })).isError).toBe(false);
      const done = await call(human, "oc_wait", { session_id: sessionId });
      expect(done.data.status, done.text).toBe("done");
      expect(readFileSync(marker, "utf8").trim()).toBe("headless");
      const after = (await readMessages(oc, sessionId)).flatMap((m) => m.parts).find((p) => p.type === "tool" && p.tool === "bash");
      expect(after?.type === "tool" && after.state.status).toBe("completed");
      expect(
        audit()
          .filter((e) => e.tool === "oc_answer")
          .at(-1),
      ).toMatchObject({ by: "model", decision: "once" });
    });
  }

  it("a client without elicitation gets BLOCKED, as before", async () => {
    const asked = person.forms.length;
    server.model.queue(toolCall("bash", { command: "echo blocked", description: "echo" }), text("Went on without it."));
    const r = await call(plain, "oc_delegate", { task: "Run echo", permissions: "agent" });
    expect(r.data.status, r.text).toBe("blocked");
    expect(r.text).toContain("BLOCKED");
    const pending = r.data.pending as { id: string }[];
    // Let the agent go on (a reject with a message continues the turn) so the script is used up.
    await call(plain, "oc_answer", { request_id: pending[0]!.id, decision: "reject", message: "not now" });
    const done = await call(plain, "oc_wait", { session_id: r.data.session_id });
    expect(done.data.status, done.text).toBe("done");
    expect(person.forms.length).toBe(asked);
  });

  it("approvals: deny rejects every request with a message; the agent goes on", async () => {
    const marker = join(server.directory, "denied.txt");
    server.model.queue(toolCall("bash", { command: `echo x > ${marker}`, description: "write marker" }), text("Denied, so I stopped."));
    const r = await call(plain, "oc_delegate", { task: "Try the command", permissions: "agent", approvals: "deny" });
    expect(r.data.status, r.text).toBe("done");
    expect(existsSync(marker)).toBe(false);
    expect(sent(server.model.lastRequest({ sessionId: r.data.session_id as string, kind: "chat" }))).toContain("Denied by policy");
    expect(audit().find((e) => e.by === "policy" && e.session_id === r.data.session_id)).toMatchObject({ decision: "reject", tool: "oc_delegate" });
  });

  it("OPENCODE_CONDUCTOR_APPROVALS=deny wins over a client that could ask and over the call's own choice", async () => {
    const denying = await startMcp(env({ OPENCODE_CONDUCTOR_APPROVALS: "deny" }), { elicitation: {} });
    try {
      denying.client.setRequestHandler("elicitation/create", async () => {
        throw new Error("deny mode must not ask");
      });
      server.model.queue(toolCall("bash", { command: "echo policy", description: "echo" }), text("Fine."));
      const r = await call(denying, "oc_delegate", { task: "Echo", permissions: "agent", approvals: "return" });
      expect(r.data.status, r.text).toBe("done");
      expect(sent(server.model.lastRequest({ sessionId: r.data.session_id as string, kind: "chat" }))).toContain("Denied by policy");
    } finally {
      await denying.close();
    }
  });
});

describe("gates", () => {
  it("a failing check goes back to the agent, which fixes it; round 2 passes → done", async () => {
    const status = join(server.directory, "status.txt");
    writeFileSync(join(server.directory, "check.sh"), 'grep -q fixed status.txt || { echo "status.txt is not fixed yet"; exit 1; }\n');
    server.model.queue(
      toolCall("write", { filePath: status, content: "broken\n" }),
      text("Wrote it."),
      toolCall("write", { filePath: status, content: "fixed\n" }),
      text("Fixed it."),
    );
    const r = await call(human, "oc_delegate", { task: "Write status.txt", permissions: "auto", checks: ["sh check.sh"] });
    expect(r.data.status, r.text).toBe("done");
    expect(r.data.answer).toBe("Fixed it.");
    expect(r.data.checks).toEqual([
      { round: 1, command: "sh check.sh", passed: false, exit: 1, output: "status.txt is not fixed yet" },
      { round: 2, command: "sh check.sh", passed: true, exit: 0 },
    ]);
    const requests = server.model.requestsFor(r.data.session_id as string).filter((q) => q.kind === "chat");
    expect(requests).toHaveLength(4);
    expect(sent(requests[2])).toContain("The check `sh check.sh` failed (exit 1):\\nstatus.txt is not fixed yet\\nFix it.");
    expect(readFileSync(status, "utf8")).toBe("fixed\n");
    expect(r.text).toContain("round 2 `sh check.sh`: passed");
  });

  it("a check that never passes ends checks_failed after max_rounds, with the last output", async () => {
    server.model.queue(text("Did it."), text("Tried to fix it."));
    const r = await call(human, "oc_delegate", { task: "Do the thing", checks: ["echo still broken; exit 3"], max_rounds: 2 });
    expect(r.data.status, r.text).toBe("checks_failed");
    expect(r.data.checks).toEqual([
      { round: 1, command: "echo still broken; exit 3", passed: false, exit: 3, output: "still broken" },
      { round: 2, command: "echo still broken; exit 3", passed: false, exit: 3, output: "still broken" },
    ]);
    expect(server.model.requestsFor(r.data.session_id as string).filter((q) => q.kind === "chat")).toHaveLength(2);
    expect(r.text).toMatch(/^CHECKS_FAILED/);
    expect(r.text).toContain("still broken");
    const line = audit().find((e) => e.tool === "oc_delegate" && e.session_id === r.data.session_id);
    expect(line).toMatchObject({
      outcome: "checks_failed",
      detail: {
        checks: [
          { round: 1, passed: false, exit: 3 },
          { round: 2, passed: false, exit: 3 },
        ],
      },
    });
  });
});

describe("budgets", () => {
  it("max_tokens interrupts a long turn once the spend passes it → budget_exceeded with totals", async () => {
    const file = (n: number) => join(server.directory, `budget-${n}.txt`);
    const usage = { prompt_tokens: 1000, completion_tokens: 20 };
    server.model.queue(
      toolCall("write", { filePath: file(1), content: "1\n" }, { usage }),
      toolCall("write", { filePath: file(2), content: "2\n" }, { usage, delayMs: 4000 }),
      toolCall("write", { filePath: file(3), content: "3\n" }, { usage }),
      text("All written.", { usage }),
    );
    try {
      const r = await call(human, "oc_delegate", { task: "Write three files", permissions: "auto", max_tokens: 50 });
      expect(r.data.status, r.text).toBe("budget_exceeded");
      const budget = r.data.budget as { tokens: number; exceeded: boolean; max_tokens: number };
      expect(budget).toMatchObject({ exceeded: true, max_tokens: 50 });
      expect(budget.tokens).toBeGreaterThan(50);
      expect(existsSync(file(3))).toBe(false);
      expect(server.model.requestsFor(r.data.session_id as string).filter((q) => q.kind === "chat").length).toBeLessThanOrEqual(2);
      expect(r.text).toMatch(/^BUDGET_EXCEEDED/);
      expect(audit().find((e) => e.tool === "oc_delegate" && e.session_id === r.data.session_id)).toMatchObject({
        outcome: "budget_exceeded",
        detail: { budget: { exceeded: true } },
      });
    } finally {
      server.model.clear(); // the steps the budget cut off
    }
  });

  it("a batch cap stops the running task and keeps the rest from starting", async () => {
    const usage = { prompt_tokens: 1000, completion_tokens: 20 };
    server.model.queue(
      toolCall("write", { filePath: join(server.directory, "batch-1.txt"), content: "1\n" }, { usage }),
      toolCall("write", { filePath: join(server.directory, "batch-2.txt"), content: "2\n" }, { usage, delayMs: 4000 }),
      text("Batch task done.", { usage }),
    );
    try {
      const r = await call(human, "oc_delegate_parallel", {
        tasks: [
          { task: "first", permissions: "auto" },
          { task: "second", permissions: "auto" },
        ],
        concurrency: 1,
        max_tokens: 50,
      });
      expect(r.data.counts, r.text).toEqual({ budget_exceeded: 1, not_started: 1 });
      expect(r.data.budget).toMatchObject({ exceeded: true, max_tokens: 50 });
      expect((r.data.results as { error?: { name: string } }[])[1]!.error?.name).toBe("BudgetExceeded");
      expect(existsSync(join(server.directory, "batch-2.txt"))).toBe(false);
    } finally {
      server.model.clear();
    }
  });
});

describe("idempotent starts", () => {
  it("a repeated request_id returns the first session without starting again, also after a restart", async () => {
    server.model.queue(text("First and only."));
    const first = await call(human, "oc_delegate", { task: "Say it once", request_id: "req-once" });
    expect(first.data.status, first.text).toBe("done");
    const requests = server.model.requests.length;

    const again = await call(human, "oc_delegate", { task: "Say it once", request_id: "req-once" });
    expect(again.data).toMatchObject({ session_id: first.data.session_id, status: "done", answer: "First and only.", replayed: true });
    expect(again.text).toMatch(/^REPLAYED/);

    const restarted = await startMcp(env());
    try {
      const after = await call(restarted, "oc_delegate", { task: "Say it once", request_id: "req-once" });
      expect(after.data).toMatchObject({ session_id: first.data.session_id, answer: "First and only.", replayed: true });
      const wrongTool = await call(restarted, "oc_delegate_parallel", { tasks: [{ task: "x" }], request_id: "req-once" });
      expect(wrongTool.isError).toBe(true);
      expect(wrongTool.text).toContain("was used for oc_delegate");
    } finally {
      await restarted.close();
    }
    expect(server.model.requests.length).toBe(requests);
    const lines = audit().filter((e) => e.detail?.request_id === "req-once");
    expect(lines.map((e) => e.detail.replayed ?? false)).toEqual([false, true, true, false]);
  });

  it("oc_delegate_parallel with a request_id replays the batch's sessions", async () => {
    server.model.queue(text("Batch answer."), text("Batch answer."));
    const first = await call(plain, "oc_delegate_parallel", { tasks: [{ task: "one" }, { task: "two" }], request_id: "req-batch" });
    expect(first.data.counts, first.text).toEqual({ done: 2 });
    const requests = server.model.requests.length;
    const again = await call(plain, "oc_delegate_parallel", { tasks: [{ task: "one" }, { task: "two" }], request_id: "req-batch" });
    const ids = (r: ToolCall) => (r.data.results as { session_id: string }[]).map((x) => x.session_id);
    expect(again.data.replayed).toBe(true);
    expect(ids(again)).toEqual(ids(first));
    expect(again.data.counts).toEqual({ done: 2 });
    expect(server.model.requests.length).toBe(requests);
  });
});

describe("audit trail", () => {
  it("is 0600, has the approvals and the governed calls, and neither it nor any answer holds the password", () => {
    const path = join(stateDir, "audit.jsonl");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const raw = readFileSync(path, "utf8");
    expect(raw).not.toContain(server.password);
    expect(JSON.stringify(outputs)).not.toContain(server.password);
    expect(JSON.stringify(person.forms)).not.toContain(server.password);
    const entries = audit();
    expect(entries.filter((e) => e.by === "human").map((e) => e.decision)).toEqual(["once", "reject"]);
    expect(entries.filter((e) => e.by === "policy")).toHaveLength(2);
    expect(entries.filter((e) => e.by === "client").map((e) => [e.decision, e.detail.action])).toEqual([
      ["returned", "cancel"],
      ["returned", "decline"],
    ]);
    expect(entries.filter((e) => e.tool === "oc_answer").map((e) => [e.by, e.decision])).toEqual([
      ["model", "once"],
      ["model", "once"],
      ["model", "reject"],
    ]);
    expect(entries.filter((e) => e.tool === "oc_delegate").length).toBeGreaterThanOrEqual(10);
  });
});
