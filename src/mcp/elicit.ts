// Approvals for tools that wait on a turn (oc_delegate, oc_delegate_parallel, oc_wait, oc_send): a
// permission request or question is asked of the human through MCP elicitation (`elicit`), rejected
// (`deny`), or given back to the calling model as BLOCKED (`return`). The human's and the policy's
// answers are audited with who gave them.
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { NotFoundError } from "../client/errors.js";
import type { ApprovalMode } from "../config.js";
import { describeRequest, type AnswerPermission, type AnswerQuestion, type PendingPermission, type PendingQuestion, type PendingRequest } from "../core/approvals.js";
import { digestPrompt } from "../core/audit.js";
import type { BlockedHandler } from "../core/blocked.js";
import type { Conductor } from "../core/conductor.js";
import type { ToolContext } from "./tool.js";

export const DENY_MESSAGE = "Denied by policy: this server does not allow it. Carry on without it, or say what you needed.";

/** The mode of one call: `deny` in the configuration is a policy no call can loosen. */
export function approvalMode(ctx: ToolContext, requested?: ApprovalMode): ApprovalMode {
  if (ctx.config.approvals === "deny") return "deny";
  const mode = requested ?? ctx.config.approvals ?? "elicit";
  return mode === "elicit" && !ctx.canElicit?.() ? "return" : mode;
}

/** The core's onBlocked hook for this call, or undefined for `return` (today's BLOCKED answer). */
export function approvalHandler(ctx: ToolContext, conductor: Conductor, requested?: ApprovalMode): BlockedHandler | undefined {
  const mode = approvalMode(ctx, requested);
  if (mode === "return") return undefined;
  // One form at a time: parallel tasks of one call must not stack dialogs on the user.
  let queue: Promise<unknown> = Promise.resolve();
  return (request, o) => {
    const next = queue.then(() => (mode === "deny" ? deny(ctx, conductor, request) : ask(ctx, conductor, request, o)));
    queue = next.catch(() => undefined);
    return next;
  };
}

async function deny(ctx: ToolContext, conductor: Conductor, r: PendingRequest): Promise<"handled" | "return"> {
  const reply = r.kind === "permission" ? { requestId: r.id, sessionId: r.sessionId, decision: "reject" as const, message: DENY_MESSAGE } : { questionId: r.id, sessionId: r.sessionId, reject: true };
  ctx.progress(`denied by policy: ${describeRequest(r)}`);
  return answer(ctx, conductor, r, reply, "policy");
}

async function ask(ctx: ToolContext, conductor: Conductor, r: PendingRequest, o: { timeoutMs?: number; signal?: AbortSignal }): Promise<"handled" | "return"> {
  ctx.progress(`asking the user: ${describeRequest(r)}`);
  let result: ElicitResult;
  try {
    result = await ctx.elicit!(r.kind === "permission" ? permissionForm(r) : questionForm(r), o);
  } catch (error) {
    // No answer in time (or the client failed): the caller gets BLOCKED and can still answer.
    ctx.log("warning", `Asking the user about ${r.id} failed (${(error as Error).message}); returning it as BLOCKED.`);
    return "return";
  }
  return answer(ctx, conductor, r, r.kind === "permission" ? permissionReply(r, result) : questionReply(r, result), "human", result.action);
}

async function answer(ctx: ToolContext, conductor: Conductor, r: PendingRequest, reply: AnswerPermission | AnswerQuestion, by: "human" | "policy", action?: string): Promise<"handled" | "return"> {
  let outcome = "ok";
  try {
    await conductor.answer(reply);
  } catch (error) {
    // Answered meanwhile (by the model through oc_answer, or the turn ended): nothing left to do.
    if (!(error instanceof NotFoundError)) {
      ctx.log("warning", `Answering ${r.id} failed: ${(error as Error).message}`);
      return "return";
    }
    outcome = "gone";
  }
  const decision = "decision" in reply ? reply.decision : reply.reject ? "reject" : "answered";
  const message = "message" in reply ? reply.message : undefined;
  await ctx.audit?.({
    session_id: r.sessionId,
    decision,
    by,
    outcome,
    // What the agent is told is kept like a prompt: hash, length, first line.
    ...(message ? { prompt: digestPrompt(message) } : {}),
    detail: {
      request_id: r.id,
      ...(action ? { action } : {}),
      ...(r.kind === "permission" ? { permission: r.permission, patterns: r.patterns } : { answers: "answers" in reply ? reply.answers : undefined }),
    },
  });
  return "handled";
}

function permissionForm(r: PendingPermission): ElicitRequestFormParams {
  const what = typeof r.metadata.description === "string" ? `\n(${r.metadata.description})` : "";
  const always = r.always.length > 0 ? `\n"always" also allows from now on: ${r.always.join(", ")}` : "";
  return {
    message: `An opencode agent (session ${r.sessionId}) asks permission for ${r.permission}:\n${r.patterns.map((p) => `  ${p}`).join("\n") || "  (no pattern)"}${what}${always}`,
    requestedSchema: {
      type: "object",
      properties: {
        decision: { type: "string", title: "Decision", enum: ["once", "always", "reject"], description: "once: allow this time; always: allow this pattern; reject: refuse" },
        message: { type: "string", title: "Message to the agent", description: "Optional; with reject the agent continues with this feedback" },
      },
      required: ["decision"],
    },
  };
}

function permissionReply(r: PendingPermission, result: ElicitResult): AnswerPermission {
  const base = { requestId: r.id, sessionId: r.sessionId };
  if (result.action === "decline") return { ...base, decision: "reject", message: "The user declined this request." };
  if (result.action !== "accept") return { ...base, decision: "reject", message: "The user dismissed the approval request without answering." };
  const decision = result.content?.decision;
  const message = typeof result.content?.message === "string" ? result.content.message.trim() : "";
  if (decision !== "once" && decision !== "always") return { ...base, decision: "reject", ...(message ? { message } : {}) };
  return { ...base, decision };
}

function questionForm(r: PendingQuestion): ElicitRequestFormParams {
  const properties: ElicitRequestFormParams["requestedSchema"]["properties"] = {};
  const required: string[] = [];
  r.questions.forEach((q, i) => {
    const key = `q${i + 1}`;
    const described = q.options.filter((o) => o.description).map((o) => `${o.label}: ${o.description}`).join("; ");
    const description = `${q.question}${described ? ` (${described})` : ""}`;
    const title = q.header || q.question;
    if (q.options.length === 0) {
      properties[key] = { type: "string", title, description };
      required.push(key);
      return;
    }
    const labels = q.options.map((o) => o.label);
    properties[key] = q.multiple ? { type: "array", title, description, items: { type: "string", enum: labels } } : { type: "string", title, description, enum: labels };
    properties[`${key}_text`] = { type: "string", title: "Or your own answer", description: "Used instead of the choice when filled in" };
  });
  return { message: `An opencode agent (session ${r.sessionId}) asks:\n${r.questions.map((q) => `  ${q.question}`).join("\n")}`, requestedSchema: { type: "object", properties, required } };
}

function questionReply(r: PendingQuestion, result: ElicitResult): AnswerQuestion {
  const base = { questionId: r.id, sessionId: r.sessionId };
  // A question can only be answered or dismissed: a decline or cancel dismisses it.
  if (result.action !== "accept") return { ...base, reject: true };
  const content = result.content ?? {};
  const answers = r.questions.map((_, i) => {
    const text = content[`q${i + 1}_text`];
    if (typeof text === "string" && text.trim()) return [text.trim()];
    const choice = content[`q${i + 1}`];
    if (Array.isArray(choice)) return choice.filter((c): c is string => typeof c === "string");
    return typeof choice === "string" && choice ? [choice] : [];
  });
  return answers.every((a) => a.length === 0) ? { ...base, reject: true } : { ...base, answers };
}
