// How a turn summary is shown to an MCP client: one output shape shared by every tool that returns
// a turn (delegate, wait, result, send, interrupt), and a short text that says what to do next.
import type { PendingRequest } from "../core/model/pending-request.js";
import { z } from "zod";
import type { BudgetTotals } from "../core/governance/budget.js";
import type { CheckRun } from "../core/governance/checks.js";
import type { TurnSummary } from "../core/turns/summary.js";

// Compact on purpose: every client pays for schemas in context. The object is loose, so the
// answer also carries answer, next, error, pending, model, agent, tools, files, tokens, cost, message_id, directory,
// transcript, checks, budget, replayed, fallbacks.
export const turnOutput = {
  session_id: z.string(),
  status: z.enum(["done", "error", "blocked", "running", "interrupted", "lost", "unreachable", "checks_failed", "budget_exceeded"]),
};

type PendingData = {
  kind: "permission" | "question";
  id: string;
  session_id: string;
  permission?: string;
  patterns?: string[];
  always?: string[];
  questions?: Array<{ question: string; header?: string; options: Array<{ label: string; description?: string }>; multiple?: boolean }>;
  answer_with: string;
};

export type TurnData = {
  session_id: string;
  status: TurnSummary["status"];
  answer: string;
  error?: { name: string; message: string };
  pending?: PendingData[];
  next?: string;
  model?: string;
  agent?: string;
  tools?: Array<{ tool: string; title?: string; status: string }>;
  files?: Array<{ path: string; status?: string; additions?: number; deletions?: number }>;
  tokens?: { input: number; output: number; reasoning: number; cache_read: number; cache_write: number; total: number };
  cost?: number;
  message_id?: string;
  directory?: string;
  transcript?: Record<string, unknown>[];
  /** Model switches of the fallback watchdog: `{from, to, reason, at}`. */
  fallbacks?: Array<{ from: string; to: string; reason: string; at: string }>;
  checks?: Array<{ round: number; command: string; passed: boolean; exit: number | null; timed_out?: boolean; output?: string }>;
  budget?: { tokens: number; cost: number; exceeded: boolean; max_tokens?: number; max_cost_usd?: number };
  /** A repeated request_id: the first call's session, not a new start. */
  replayed?: boolean;
};

type Governed = { checks?: CheckRun[]; budget?: BudgetTotals };

export function answerCall(r: PendingRequest): string {
  return r.kind === "permission"
    ? `oc_answer {"request_id":"${r.id}","decision":"once"}  (or "always", or "reject" with a "message")`
    : `oc_answer {"request_id":"${r.id}","answers":[[${JSON.stringify(r.questions[0]?.options[0]?.label ?? "…")}]]}  (one list of labels per question; or "decision": "reject")`;
}

function nextStep(s: TurnSummary): string | undefined {
  if (s.status === "blocked") return `Answer each pending request with oc_answer, then call oc_wait {"session_id":"${s.sessionId}"}.`;
  if (s.status === "running") return `Call oc_wait {"session_id":"${s.sessionId}"} to get the result (oc_result reads the state without waiting).`;
  if (s.status === "checks_failed")
    return `Checks still fail (see checks): fix them, or continue with oc_delegate {"session_id":"${s.sessionId}", ...} and the same checks.`;
  if (s.status === "unreachable") return `Ask again with oc_wait {"session_id":"${s.sessionId}"} (oc_result reads it without waiting).`;
  if (s.status === "lost")
    return `opencode recorded no end of this turn and never will. oc_result {"session_id":"${s.sessionId}"} shows what it kept (once opencode runs again); oc_delegate {"session_id":"${s.sessionId}", ...} continues the work.`;
  if (s.status === "budget_exceeded")
    return `Stopped at the budget (see budget). To spend more, continue with oc_delegate {"session_id":"${s.sessionId}", ...} and a new budget.`;
  return undefined;
}

export function turnData(s: TurnSummary & Governed & { directory?: string }): TurnData {
  const next = nextStep(s);
  return {
    session_id: s.sessionId,
    status: s.status,
    answer: s.answer,
    ...(s.error ? { error: s.error } : {}),
    ...(s.pending && s.pending.length > 0
      ? {
          pending: s.pending.map((r) =>
            r.kind === "permission"
              ? {
                  kind: r.kind,
                  id: r.id,
                  session_id: r.sessionId,
                  permission: r.permission,
                  patterns: r.patterns,
                  always: r.always,
                  answer_with: answerCall(r),
                }
              : { kind: r.kind, id: r.id, session_id: r.sessionId, questions: r.questions, answer_with: answerCall(r) },
          ),
        }
      : {}),
    ...(next ? { next } : {}),
    ...(s.model ? { model: s.model } : {}),
    ...(s.agent ? { agent: s.agent } : {}),
    ...(s.tools ? { tools: s.tools } : {}),
    ...(s.files ? { files: s.files } : {}),
    ...(s.tokens
      ? {
          tokens: {
            input: s.tokens.input,
            output: s.tokens.output,
            reasoning: s.tokens.reasoning,
            cache_read: s.tokens.cacheRead,
            cache_write: s.tokens.cacheWrite,
            total: s.tokens.total,
          },
        }
      : {}),
    ...(s.cost !== undefined ? { cost: s.cost } : {}),
    ...(s.messageId ? { message_id: s.messageId } : {}),
    ...(s.directory ? { directory: s.directory } : {}),
    ...(s.transcript ? { transcript: s.transcript as unknown as Record<string, unknown>[] } : {}),
    ...(s.fallbacks?.length ? { fallbacks: s.fallbacks.map((f) => ({ from: f.from, to: f.to, reason: f.reason, at: f.at })) } : {}),
    ...(s.checks ? { checks: s.checks.map(({ timedOut, ...c }) => ({ ...c, ...(timedOut ? { timed_out: true } : {}) })) } : {}),
    ...(s.budget ? { budget: budgetData(s.budget) } : {}),
  };
}

function budgetData(b: BudgetTotals): NonNullable<TurnData["budget"]> {
  return {
    tokens: b.tokens,
    cost: b.cost,
    exceeded: b.exceeded,
    ...(b.maxTokens !== undefined ? { max_tokens: b.maxTokens } : {}),
    ...(b.maxCostUsd !== undefined ? { max_cost_usd: b.maxCostUsd } : {}),
  };
}

/** A few lines a model reads first: status, the answer, what changed, what to do next. */
export function turnText(d: TurnData): string {
  const facts = [
    `session ${d.session_id}`,
    d.model,
    d.tools?.length ? `${d.tools.length} tool call${d.tools.length === 1 ? "" : "s"}` : undefined,
    d.tokens ? `${d.tokens.total} tokens` : undefined,
    d.cost ? `$${d.cost.toFixed(4)}` : undefined,
  ].filter(Boolean);
  const lines = [`${d.status.toUpperCase()} · ${facts.join(" · ")}`];
  if (d.error) lines.push(`Error: ${d.error.name}: ${d.error.message}`);
  if (d.fallbacks?.length) lines.push(...d.fallbacks.map((f) => `Model fallback: ${f.from} → ${f.to} (${f.reason})`));
  if (d.answer) lines.push("", d.answer);
  if (d.files?.length)
    lines.push(
      "",
      `Files changed: ${d.files.map((f) => (f.additions !== undefined ? `${f.path} (+${f.additions} -${f.deletions ?? 0})` : f.path)).join(", ")}`,
    );
  if (d.checks?.length) {
    lines.push("", "Checks:");
    for (const c of d.checks) lines.push(`- round ${c.round} \`${c.command}\`: ${c.passed ? "passed" : c.timed_out ? "timed out" : `failed (exit ${c.exit})`}`);
    const last = d.checks.findLast((c) => !c.passed);
    if (d.status === "checks_failed" && last?.output) lines.push("", `Last failure (\`${last.command}\`):`, last.output);
  }
  if (d.budget)
    lines.push(
      "",
      `Budget: ${d.budget.tokens} tokens${d.budget.max_tokens !== undefined ? ` of ${d.budget.max_tokens}` : ""}, $${d.budget.cost.toFixed(4)}${d.budget.max_cost_usd !== undefined ? ` of $${d.budget.max_cost_usd}` : ""}${d.budget.exceeded ? " (exceeded: stopped)" : ""}`,
    );
  if (d.pending?.length) {
    lines.push("", "Waiting for an answer:");
    for (const p of d.pending) {
      const what =
        p.kind === "permission"
          ? `permission ${p.permission}: ${p.patterns?.join(", ")}`
          : `question: ${p.questions?.map((q) => `${q.question} [${q.options.map((o) => o.label).join(" | ")}]`).join("; ")}`;
      lines.push(`- ${what}`, `  → ${p.answer_with}`);
    }
  }
  if (d.next) lines.push("", d.next);
  return lines.join("\n");
}

/**
 * oc_send's answer: how the message went in, and the turn (running when it answers at once; the
 * turn's end as a task). A repeated request_id says it sent nothing again.
 */
export function sendAnswer(r: TurnSummary & { delivery: string; replayed?: true }): { text: string; data: TurnData & { delivery: string } } {
  const data = { delivery: r.delivery, ...turnData(r), ...(r.replayed ? { replayed: true } : {}) };
  const said = r.replayed ? "Not sent again: this request_id was sent before; its session's turn:" : `Sent (${r.delivery}).`;
  return { text: `${said}\n${turnText(data)}`, data };
}
