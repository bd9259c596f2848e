// Approvals for tools that wait on a turn (oc_delegate, oc_delegate_parallel, oc_wait, oc_send): a
// permission request or question is asked of the human through MCP elicitation (`elicit`: a
// 2025-11-25 client gets `elicitation/create` while the call waits; a 2026-07-28 client, which has
// no server-to-client requests, gets the same form in an `input_required` round, approvals/rounds.ts),
// rejected (`deny`), or given back to the calling model as BLOCKED (`return`). A form no person answered (the
// client cancelled it, or declined it faster than anyone could read it: `claude -p` and `codex exec`
// do both within milliseconds) is not taken as a rejection: the request goes back as BLOCKED with the
// exact oc_answer call. Every decision is audited with who made it (`human`, `client`, `policy`), and
// every approval not given is reported in the call's result (refusals.ts).
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/server";
import { NotFoundError } from "../client/errors.js";
import type { ApprovalMode } from "../config.js";
import {
  describeRequest,
  type AnswerPermission,
  type AnswerQuestion,
  type PendingPermission,
  type PendingQuestion,
  type PendingRequest,
} from "../core/model/pending-request.js";
import { digestPrompt } from "../core/governance/prompt-digest.js";
import type { BlockedHandler } from "../core/turns/blocked.js";
import { AnsweredElsewhere } from "../core/turns/pending-requests.js";
import type { Conductor } from "../core/conductor.js";
import type { Decider, RefusedApproval } from "./refusals.js";
import type { ToolContext } from "./tool-def.js";

export const DENY_MESSAGE = "Denied by policy: this server does not allow it. Carry on without it, or say what you needed.";

/** A decline faster than this came from the client, not from a person who read the form. */
export const FASTEST_HUMAN_MS = 1_000;

/**
 * The mode of one call: `deny` in the configuration is a policy no call can loosen. `round`: asked
 * after the call gives the request back, in an input_required round (a 2026-07-28 client).
 */
export function approvalMode(ctx: ToolContext, requested?: ApprovalMode): ApprovalMode | "round" {
  if (ctx.config.approvals === "deny") return "deny";
  const mode = requested ?? ctx.config.approvals ?? "elicit";
  if (mode !== "elicit") return mode;
  if (ctx.canElicit?.()) return "elicit";
  return ctx.rounds ? "round" : "return";
}

/** The core's onBlocked hook for this call, or undefined for `return` (today's BLOCKED answer). */
export function approvalHandler(ctx: ToolContext, conductor: Conductor, requested?: ApprovalMode, now: () => number = Date.now): BlockedHandler | undefined {
  const mode = approvalMode(ctx, requested);
  if (mode === "return") return undefined;
  if (mode === "round") {
    const rounds = ctx.rounds!;
    // The turn stops here and the call gives the request back; the client is asked once the call answers.
    return async (request) => {
      if (rounds.ask(request)) ctx.progress(`asking the user: ${describeRequest(request)}`);
      return "return";
    };
  }
  // One form at a time: parallel tasks of one call must not stack dialogs on the user.
  let queue: Promise<unknown> = Promise.resolve();
  return (request, o) => {
    const next = queue.then(() => (mode === "deny" ? deny(ctx, conductor, request) : ask(ctx, conductor, request, o, now)));
    queue = next.catch(() => undefined);
    return next;
  };
}

async function deny(ctx: ToolContext, conductor: Conductor, r: PendingRequest): Promise<"handled" | "return"> {
  const reply =
    r.kind === "permission"
      ? { requestId: r.id, sessionId: r.sessionId, decision: "reject" as const, message: DENY_MESSAGE }
      : { questionId: r.id, sessionId: r.sessionId, reject: true };
  ctx.progress(`denied by policy: ${describeRequest(r)}`);
  return answer(ctx, conductor, r, reply, { by: "policy", reason: "rejected by this server's deny policy" });
}

async function ask(
  ctx: ToolContext,
  conductor: Conductor,
  r: PendingRequest,
  o: { timeoutMs?: number; signal?: AbortSignal },
  now: () => number,
): Promise<"handled" | "return"> {
  ctx.progress(`asking the user: ${describeRequest(r)}`);
  const asked = now();
  let result: ElicitResult;
  try {
    result = await ctx.elicit!(formFor(r), o);
  } catch (error) {
    // Answered in the web console (or by another client) while the form was open: the form is
    // withdrawn and the wait goes on; whoever answered audited it.
    if (o.signal?.reason instanceof AnsweredElsewhere) {
      ctx.progress(`answered elsewhere: ${describeRequest(r)}`);
      return "handled";
    }
    // No answer in time (or the client failed): the caller gets BLOCKED and can still answer.
    ctx.log("warning", `Asking the user about ${r.id} failed (${(error as Error).message}); returning it as BLOCKED.`);
    return giveBack(ctx, r, {
      by: "client",
      action: "error",
      elapsed: now() - asked,
      reason: `asking the user failed (${(error as Error).message.slice(0, 200)})`,
    });
  }
  return settle(ctx, conductor, r, result, now() - asked);
}

/**
 * What a form's answer decides, `elapsed` ms after it was asked: an answer, a person's refusal, or
 * (cancelled, or declined faster than anyone could read it) nothing: the request goes back to the
 * calling model. The same on both eras.
 */
export async function settle(ctx: ToolContext, conductor: Conductor, r: PendingRequest, result: ElicitResult, elapsed: number): Promise<"handled" | "return"> {
  if (result.action === "cancel") {
    // A person who dismisses a form has not refused either: the calling model decides with oc_answer.
    const by = elapsed < FASTEST_HUMAN_MS ? "client" : "human";
    return giveBack(ctx, r, {
      by,
      action: "cancel",
      elapsed,
      reason: by === "client" ? `the client cancelled the form in ${elapsed} ms without showing it to anyone` : "the user dismissed the form without answering",
    });
  }
  if (result.action === "decline" && elapsed < FASTEST_HUMAN_MS) {
    return giveBack(ctx, r, {
      by: "client",
      action: "decline",
      elapsed,
      reason: `the client declined the form in ${elapsed} ms, before anyone could have read it`,
    });
  }
  const reply = r.kind === "permission" ? permissionReply(r, result) : questionReply(r, result);
  const rejected = "decision" in reply ? reply.decision === "reject" : reply.reject === true;
  return answer(
    ctx,
    conductor,
    r,
    reply,
    { by: "human", action: result.action, elapsed, reason: result.action === "decline" ? "declined by the user" : "rejected by the user" },
    rejected,
  );
}

/** Leaves the request pending for the calling model (BLOCKED with the oc_answer call), audited and reported. */
export async function giveBack(ctx: ToolContext, r: PendingRequest, d: { by: Decider; action: string; elapsed: number; reason: string }): Promise<"return"> {
  ctx.rounds?.gaveBack(r.id);
  ctx.refused?.push(refusal(r, { ...d, outcome: "returned", reason: `${d.reason}; it is still pending: answer it with oc_answer` }));
  await ctx.audit?.({
    session_id: r.sessionId,
    decision: "returned",
    by: d.by,
    outcome: "returned",
    detail: { request_id: r.id, action: d.action, elapsed_ms: d.elapsed, ...what(r) },
  });
  return "return";
}

async function answer(
  ctx: ToolContext,
  conductor: Conductor,
  r: PendingRequest,
  reply: AnswerPermission | AnswerQuestion,
  d: { by: Decider; action?: string; elapsed?: number; reason: string },
  rejected = true,
): Promise<"handled" | "return"> {
  let outcome = "ok";
  try {
    // The server holding the session (a private instance's session is answered there).
    const holder = r.sessionId ? await ctx.conductor(r.sessionId) : conductor;
    await holder.answer(reply);
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
  if (rejected && outcome === "ok") ctx.refused?.push(refusal(r, { ...d, outcome: "rejected", reason: message ? `${d.reason}: ${message}` : d.reason }));
  await ctx.audit?.({
    session_id: r.sessionId,
    decision,
    by: d.by,
    outcome,
    // What the agent is told is kept like a prompt: hash, length, first line.
    ...(message ? { prompt: digestPrompt(message) } : {}),
    detail: {
      request_id: r.id,
      ...(d.action ? { action: d.action } : {}),
      ...(d.elapsed !== undefined ? { elapsed_ms: d.elapsed } : {}),
      ...(r.kind === "permission" ? what(r) : { answers: "answers" in reply ? reply.answers : undefined }),
    },
  });
  return "handled";
}

function what(r: PendingRequest): Record<string, unknown> {
  return r.kind === "permission" ? { permission: r.permission, patterns: r.patterns } : { questions: r.questions.map((q) => q.question) };
}

function refusal(
  r: PendingRequest,
  d: { by: Decider; action?: string; elapsed?: number; outcome: RefusedApproval["outcome"]; reason: string },
): RefusedApproval {
  return {
    request_id: r.id,
    session_id: r.sessionId,
    kind: r.kind,
    what: describeRequest(r),
    by: d.by,
    outcome: d.outcome,
    ...(d.action ? { action: d.action } : {}),
    ...(d.elapsed !== undefined ? { elapsed_ms: d.elapsed } : {}),
    reason: d.reason,
  };
}

/** The form that asks for `r`: the same fields and choices on both eras. */
export function formFor(r: PendingRequest): ElicitRequestFormParams {
  return r.kind === "permission" ? permissionForm(r) : questionForm(r);
}

function permissionForm(r: PendingPermission): ElicitRequestFormParams {
  const what = typeof r.metadata.description === "string" ? `\n(${r.metadata.description})` : "";
  const always = r.always.length > 0 ? `\n"always" also allows from now on: ${r.always.join(", ")}` : "";
  return {
    message: `An opencode agent (session ${r.sessionId}) asks permission for ${r.permission}:\n${r.patterns.map((p) => `  ${p}`).join("\n") || "  (no pattern)"}${what}${always}`,
    requestedSchema: {
      type: "object",
      properties: {
        decision: {
          type: "string",
          title: "Decision",
          enum: ["once", "always", "reject"],
          description: "once: allow this time; always: allow this pattern; reject: refuse",
        },
        message: { type: "string", title: "Message to the agent", description: "Optional; with reject the agent continues with this feedback" },
      },
      required: ["decision"],
    },
  };
}

function permissionReply(r: PendingPermission, result: ElicitResult): AnswerPermission {
  const base = { requestId: r.id, sessionId: r.sessionId };
  // A cancel never gets here (ask gives it back); a decline a person gave is their refusal.
  if (result.action !== "accept") return { ...base, decision: "reject", message: "The user declined this request." };
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
    const described = q.options
      .filter((o) => o.description)
      .map((o) => `${o.label}: ${o.description}`)
      .join("; ");
    const description = `${q.question}${described ? ` (${described})` : ""}`;
    const title = q.header || q.question;
    if (q.options.length === 0) {
      properties[key] = { type: "string", title, description };
      required.push(key);
      return;
    }
    const labels = q.options.map((o) => o.label);
    properties[key] = q.multiple
      ? { type: "array", title, description, items: { type: "string", enum: labels } }
      : { type: "string", title, description, enum: labels };
    properties[`${key}_text`] = { type: "string", title: "Or your own answer", description: "Used instead of the choice when filled in" };
  });
  return {
    message: `An opencode agent (session ${r.sessionId}) asks:\n${r.questions.map((q) => `  ${q.question}`).join("\n")}`,
    requestedSchema: { type: "object", properties, required },
  };
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
