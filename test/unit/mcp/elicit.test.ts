// The approval hook of the MCP tools with a fake client user and a fake conductor: which mode a call
// gets, the forms the user sees, how their reply (or a decline) becomes opencode's answer, and the
// audit line with who gave it.
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/config.js";
import type { PendingPermission, PendingQuestion } from "../../../src/core/approvals.js";
import type { Conductor } from "../../../src/core/conductor.js";
import { approvalHandler, approvalMode, DENY_MESSAGE } from "../../../src/mcp/elicit.js";
import type { ToolContext } from "../../../src/mcp/tool.js";

function fakes(o: { approvals?: Config["approvals"]; canElicit?: boolean; reply?: (p: ElicitRequestFormParams) => ElicitResult | Promise<ElicitResult> } = {}) {
  const forms: ElicitRequestFormParams[] = [];
  const answers: unknown[] = [];
  const audited: Record<string, unknown>[] = [];
  const ctx = {
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
  return { ctx, conductor, forms, answers, audited };
}

const permission: PendingPermission = { kind: "permission", id: "per_1", sessionId: "ses_1", permission: "bash", patterns: ["rm -rf build"], always: ["rm *"], metadata: {} };
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
    expect(f.audited).toEqual([{ session_id: "ses_1", decision: "always", by: "human", outcome: "ok", detail: { request_id: "per_1", action: "accept", permission: "bash", patterns: ["rm -rf build"] } }]);
  });

  it("a reject with a message, a decline and a cancel all reject with a reason", async () => {
    for (const [result, message] of [
      [{ action: "accept", content: { decision: "reject", message: "use trash instead" } }, "use trash instead"],
      [{ action: "decline" }, "The user declined this request."],
      [{ action: "cancel" }, "The user dismissed the approval request without answering."],
    ] as const) {
      const f = fakes({ reply: () => result as ElicitResult });
      await approvalHandler(f.ctx, f.conductor)!(permission, {});
      expect(f.answers).toEqual([{ requestId: "per_1", sessionId: "ses_1", decision: "reject", message }]);
    }
  });

  it("gives the request back when the user does not answer in time", async () => {
    const f = fakes({ reply: () => Promise.reject(new Error("Request timed out")) });
    expect(await approvalHandler(f.ctx, f.conductor)!(permission, { timeoutMs: 10 })).toBe("return");
    expect(f.answers).toEqual([]);
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
    await approvalHandler(declined.ctx, declined.conductor)!(question, {});
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
