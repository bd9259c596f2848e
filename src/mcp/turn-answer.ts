// How a turn summary is shown to an MCP client: one output shape shared by every tool that returns
// a turn (delegate, wait, result, send, interrupt), and a short text that says what to do next.
import { z } from "zod";
import type { PendingRequest } from "../core/approvals.js";
import type { TurnSummary } from "../core/summary.js";

const pendingShape = z.object({
  kind: z.enum(["permission", "question"]),
  id: z.string(),
  session_id: z.string(),
  permission: z.string().optional(),
  patterns: z.array(z.string()).optional(),
  always: z.array(z.string()).optional(),
  questions: z
    .array(z.object({ question: z.string(), header: z.string().optional(), options: z.array(z.object({ label: z.string(), description: z.string().optional() })), multiple: z.boolean().optional() }))
    .optional(),
  answer_with: z.string().describe("The oc_answer call that answers it"),
});

export const turnOutput = {
  session_id: z.string(),
  status: z.enum(["done", "error", "blocked", "running", "interrupted"]),
  answer: z.string(),
  error: z.object({ name: z.string(), message: z.string() }).optional(),
  pending: z.array(pendingShape).optional(),
  next: z.string().optional().describe("What to call next, when something is left to do"),
  model: z.string().optional(),
  agent: z.string().optional(),
  tools: z.array(z.object({ tool: z.string(), title: z.string().optional(), status: z.string() })).optional(),
  files: z.array(z.object({ path: z.string(), status: z.string().optional(), additions: z.number().optional(), deletions: z.number().optional() })).optional(),
  tokens: z.object({ input: z.number(), output: z.number(), reasoning: z.number(), cache_read: z.number(), cache_write: z.number(), total: z.number() }).optional(),
  cost: z.number().optional(),
  message_id: z.string().optional(),
  directory: z.string().optional(),
  transcript: z.array(z.record(z.string(), z.unknown())).optional(),
};

export type TurnData = z.output<z.ZodObject<typeof turnOutput>>;

export function answerCall(r: PendingRequest): string {
  return r.kind === "permission"
    ? `oc_answer {"request_id":"${r.id}","decision":"once"}  (or "always", or "reject" with a "message")`
    : `oc_answer {"request_id":"${r.id}","answers":[[${JSON.stringify(r.questions[0]?.options[0]?.label ?? "…")}]]}  (one list of labels per question; or "reject": true)`;
}

function nextStep(s: TurnSummary): string | undefined {
  if (s.status === "blocked") return `Answer each pending request with oc_answer, then call oc_wait {"session_id":"${s.sessionId}"}.`;
  if (s.status === "running") return `Call oc_wait {"session_id":"${s.sessionId}"} to get the result (oc_result reads the state without waiting).`;
  return undefined;
}

export function turnData(s: TurnSummary & { directory?: string }): TurnData {
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
              ? { kind: r.kind, id: r.id, session_id: r.sessionId, permission: r.permission, patterns: r.patterns, always: r.always, answer_with: answerCall(r) }
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
      ? { tokens: { input: s.tokens.input, output: s.tokens.output, reasoning: s.tokens.reasoning, cache_read: s.tokens.cacheRead, cache_write: s.tokens.cacheWrite, total: s.tokens.total } }
      : {}),
    ...(s.cost !== undefined ? { cost: s.cost } : {}),
    ...(s.messageId ? { message_id: s.messageId } : {}),
    ...(s.directory ? { directory: s.directory } : {}),
    ...(s.transcript ? { transcript: s.transcript as unknown as Record<string, unknown>[] } : {}),
  };
}

/** A few lines a model reads first: status, the answer, what changed, what to do next. */
export function turnText(d: TurnData): string {
  const facts = [`session ${d.session_id}`, d.model, d.tools?.length ? `${d.tools.length} tool call${d.tools.length === 1 ? "" : "s"}` : undefined, d.tokens ? `${d.tokens.total} tokens` : undefined, d.cost ? `$${d.cost.toFixed(4)}` : undefined].filter(Boolean);
  const lines = [`${d.status.toUpperCase()} · ${facts.join(" · ")}`];
  if (d.error) lines.push(`Error: ${d.error.name}: ${d.error.message}`);
  if (d.answer) lines.push("", d.answer);
  if (d.files?.length) lines.push("", `Files changed: ${d.files.map((f) => (f.additions !== undefined ? `${f.path} (+${f.additions} -${f.deletions ?? 0})` : f.path)).join(", ")}`);
  if (d.pending?.length) {
    lines.push("", "Waiting for an answer:");
    for (const p of d.pending) {
      const what = p.kind === "permission" ? `permission ${p.permission}: ${p.patterns?.join(", ")}` : `question: ${p.questions?.map((q) => `${q.question} [${q.options.map((o) => o.label).join(" | ")}]`).join("; ")}`;
      lines.push(`- ${what}`, `  → ${p.answer_with}`);
    }
  }
  if (d.next) lines.push("", d.next);
  return lines.join("\n");
}
