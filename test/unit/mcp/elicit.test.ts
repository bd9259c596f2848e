// The approval hook of the MCP tools with a fake client user and a fake conductor: which mode a call
// gets, the forms the user sees, how their reply (or a decline) becomes opencode's answer, and the
// audit line with who gave it.
import type { PendingPermission, PendingQuestion } from "../../../src/core/model/pending-request.js";
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/config.js";
import type { Conductor } from "../../../src/core/conductor.js";
import { approvalHandler, approvalMode, DENY_MESSAGE, FASTEST_HUMAN_MS } from "../../../src/mcp/elicit.js";
import type { RefusedApproval } from "../../../src/mcp/refusals.js";
import type { ToolContext } from "../../../src/mcp/tool-def.js";

function fakes(o: { approvals?: Config["approvals"]; canElicit?: boolean; reply?: (p: ElicitRequestFormParams) => ElicitResult | Promise<ElicitResult> } = {}) {
  const forms: ElicitRequestFormParams[] = [];
  const answers: unknown[] = [];
  const audited: Record<string, unknown>[] = [];
  const refused: RefusedApproval[] = [];
  const ctx = {
    refused,
    config: { approvals: o.approvals } as Config,
    signal: new AbortController().signal,
    progress: () => undefined,
    log: () => undefined,
    conductor: async () => conductor,
    canElicit: () => o.canElicit ?? true,
    async elicit(params: ElicitRequestFormParams) {
      forms.push(params);
      return (o.reply ?? (() => ({ action: "cancel" })))(params);
    },
    async audit(entry: Record<string, unknown>) {
      audited.push(entry);
    },
  } as unknown as ToolContext;
  const conductor = { answer: async (a: unknown) => void answers.push(a) } as unknown as Conductor;
  return { ctx, conductor, forms, answers, audited, refused };
}

/** A clock on which every form takes `ms` to answer (the handler reads it before and after asking). */
function clock(ms: number): () => number {
  let t = 0;
  return () => (t += ms);
}

const permission: PendingPermission = {
  kind: "permission",
  id: "per_1",
  sessionId: "ses_1",
  permission: "bash",
  patterns: ["rm -rf build"],
  always: ["rm *"],
  metadata: {},
};
const question: PendingQuestion = {
  kind: "question",
  id: "que_1",
  sessionId: "ses_1",
  questions: [
    { question: "Which color?", header: "Color", options: [{ label: "Red", description: "warm" }, { label: "Blue" }] },
    { question: "Which sizes?", options: [{ label: "S" }, { label: "M" }], multiple: true },
    { question: "Anything else?", options: [] },
  ],
};

describe("approvalMode", () => {
  it("elicits when the client can, else returns; deny in the configuration cannot be loosened", () => {
    expect(approvalMode(fakes().ctx)).toBe("elicit");
    expect(approvalMode(fakes({ canElicit: false }).ctx)).toBe("return");
    expect(approvalMode(fakes({ canElicit: false }).ctx, "elicit")).toBe("return");
    expect(approvalMode(fakes().ctx, "return")).toBe("return");
    expect(approvalMode(fakes({ approvals: "return" }).ctx)).toBe("return");
    expect(approvalMode(fakes({ approvals: "return" }).ctx, "deny")).toBe("deny");
    expect(approvalMode(fakes({ approvals: "deny" }).ctx, "return")).toBe("deny");
    expect(approvalMode(fakes({ approvals: "deny" }).ctx, "elicit")).toBe("deny");
  });

  it("gives no hook for return", () => {
    const f = fakes({ canElicit: false });
    expect(approvalHandler(f.ctx, f.conductor)).toBeUndefined();
  });
});

describe("approvalHandler", () => {
  it("asks about a permission and answers with the user's decision, audited as the human's", async () => {
    const f = fakes({ reply: () => ({ action: "accept", content: { decision: "always" } }) });
    expect(await approvalHandler(f.ctx, f.conductor)!(permission, {})).toBe("handled");
    expect(f.forms[0]!.message).toContain("rm -rf build");
    expect(f.forms[0]!.message).toContain("rm *");
    expect(f.answers).toEqual([{ requestId: "per_1", sessionId: "ses_1", decision: "always" }]);
    expect(f.audited).toEqual([
      {
        session_id: "ses_1",
        decision: "always",
        by: "human",
        outcome: "ok",
        detail: { request_id: "per_1", action: "accept", elapsed_ms: expect.any(Number), permission: "bash", patterns: ["rm -rf build"] },
      },
    ]);
    expect(f.refused).toEqual([]);
  });

  it("a person's reject (with a message) and slow decline reject, reported as refused and audited as the human's", async () => {
    for (const [result, message] of [
      [{ action: "accept", content: { decision: "reject", message: "use trash instead" } }, "use trash instead"],
      [{ action: "decline" }, "The user declined this request."],
    ] as const) {
      const f = fakes({ reply: () => result as ElicitResult });
      expect(await approvalHandler(f.ctx, f.conductor, undefined, clock(FASTEST_HUMAN_MS + 500))!(permission, {})).toBe("handled");
      expect(f.answers).toEqual([{ requestId: "per_1", sessionId: "ses_1", decision: "reject", message }]);
      expect(f.audited.map((a) => [a.by, a.decision, (a.detail as { elapsed_ms: number }).elapsed_ms])).toEqual([["human", "reject", FASTEST_HUMAN_MS + 500]]);
      expect(f.refused).toEqual([expect.objectContaining({ request_id: "per_1", by: "human", outcome: "rejected", what: "permission bash: rm -rf build" })]);
      expect(f.refused[0]!.reason).toContain(message);
    }
  });

  it("a cancel, or a decline faster than anyone could read the form, is given back as BLOCKED, not rejected", async () => {
    for (const [action, ms, by] of [
      ["cancel", 30, "client"],
      ["decline", 5, "client"],
      ["cancel", 20_000, "human"],
    ] as const) {
      const f = fakes({ reply: () => ({ action }) });
      expect(await approvalHandler(f.ctx, f.conductor, undefined, clock(ms))!(permission, {})).toBe("return");
      expect(f.answers).toEqual([]);
      expect(f.audited).toEqual([
        {
          session_id: "ses_1",
          decision: "returned",
          by,
          outcome: "returned",
          detail: { request_id: "per_1", action, elapsed_ms: ms, permission: "bash", patterns: ["rm -rf build"] },
        },
      ]);
      expect(f.refused).toEqual([expect.objectContaining({ request_id: "per_1", session_id: "ses_1", by, outcome: "returned", action, elapsed_ms: ms })]);
      expect(f.refused[0]!.reason).toContain("oc_answer");
    }
  });

  it("gives the request back when the user does not answer in time", async () => {
    const f = fakes({ reply: () => Promise.reject(new Error("Request timed out")) });
    expect(await approvalHandler(f.ctx, f.conductor)!(permission, { timeoutMs: 10 })).toBe("return");
    expect(f.answers).toEqual([]);
    expect(f.refused).toEqual([expect.objectContaining({ by: "client", outcome: "returned", action: "error" })]);
  });

  it("turns a question into one field per question (choices, own answer) and answers with labels", async () => {
    const f = fakes({ reply: () => ({ action: "accept", content: { q1: "Blue", q2: ["S", "M"], q3: "no", q1_text: "" } }) });
    await approvalHandler(f.ctx, f.conductor)!(question, {});
    const schema = f.forms[0]!.requestedSchema;
    expect(schema.properties.q1).toMatchObject({ type: "string", enum: ["Red", "Blue"], title: "Color" });
    expect((schema.properties.q1 as { description: string }).description).toContain("Red: warm");
    expect(schema.properties.q2).toMatchObject({ type: "array", items: { type: "string", enum: ["S", "M"] } });
    expect(schema.properties.q3).toMatchObject({ type: "string" });
    expect(schema.required).toEqual(["q3"]);
    expect(f.answers).toEqual([{ questionId: "que_1", sessionId: "ses_1", answers: [["Blue"], ["S", "M"], ["no"]] }]);
  });

  it("an own answer wins over the choice; a declined question is dismissed", async () => {
    const own = fakes({ reply: () => ({ action: "accept", content: { q1: "Red", q1_text: "Green", q3: "x" } }) });
    await approvalHandler(own.ctx, own.conductor)!(question, {});
    expect(own.answers).toEqual([{ questionId: "que_1", sessionId: "ses_1", answers: [["Green"], [], ["x"]] }]);
    const declined = fakes({ reply: () => ({ action: "decline" }) });
    await approvalHandler(declined.ctx, declined.conductor, undefined, clock(FASTEST_HUMAN_MS * 3))!(question, {});
    expect(declined.answers).toEqual([{ questionId: "que_1", sessionId: "ses_1", reject: true }]);
  });

  it("deny rejects permissions with the policy message and dismisses questions, never asking", async () => {
    const f = fakes({ approvals: "deny" });
    const hook = approvalHandler(f.ctx, f.conductor)!;
    await hook(permission, {});
    await hook(question, {});
    expect(f.forms).toEqual([]);
    expect(f.answers).toEqual([
      { requestId: "per_1", sessionId: "ses_1", decision: "reject", message: DENY_MESSAGE },
      { questionId: "que_1", sessionId: "ses_1", reject: true },
    ]);
    expect(f.audited.map((a) => [a.by, a.decision])).toEqual([
      ["policy", "reject"],
      ["policy", "reject"],
    ]);
  });

  it("asks one form at a time", async () => {
    let open = 0;
    let most = 0;
    const f = fakes({
      reply: async () => {
        most = Math.max(most, ++open);
        await Promise.resolve();
        open--;
        return { action: "accept", content: { decision: "once" } };
      },
    });
    const hook = approvalHandler(f.ctx, f.conductor)!;
    await Promise.all([hook(permission, {}), hook({ ...permission, id: "per_2" }, {})]);
    expect(most).toBe(1);
    expect(f.answers).toHaveLength(2);
  });
});
