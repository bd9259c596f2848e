import { randomUUID } from "node:crypto";
import { z } from "zod";
import { DEFAULT_CONCURRENCY, MAX_CONCURRENCY, type ParallelSummary } from "../../core/parallel.js";
import type { StartRecord } from "../../core/governance/request-ids.js";
import {
  afterCancel,
  approvalsField,
  clamped,
  detailField,
  interruptOnCancelField,
  maxCostField,
  maxTokensField,
  requestIdField,
  timeoutField,
  timeoutMs,
} from "../shared-fields.js";
import { approvalHandler } from "../elicit.js";
import { startOnce } from "../request-replay.js";
import { defineTool } from "../tool-def.js";
import { turnData, turnText, type TurnData } from "../turn-answer.js";
import { recordTaskEnd, recordTaskStart } from "../task-record.js";
import { rulesField } from "./oc_delegate.js";
import { queuedRow } from "../queued.js";

/** A queued batch's answer (oc_delegate_parallel, and oc_wait on a batch id). */
export function batchAnswer(batch: ParallelSummary & { batchId: string }) {
  const results = batch.results.map(queuedRow);
  const counts = Object.entries(batch.counts)
    .map(([k, v]) => `${v} ${k}`)
    .join(", ");
  const text = [
    `Batch ${batch.batchId}: ${batch.results.length} tasks: ${counts}${batch.running.length ? ` (oc_wait {"session_id":"${batch.batchId}"} waits for the rest)` : ""}`,
    ...results.map(
      (r) =>
        `\n[${r.index + 1}] ${"task" in r ? `${r.status.toUpperCase()} · task ${r.task.id}${r.task.worker ? ` on ${r.task.worker}` : ""}${r.task.attempts.length > 1 ? ` · ${r.task.attempts.length} attempts` : ""}${r.answer ? `\n${r.answer}` : ""}${r.error ? `\nError: ${r.error.name}: ${r.error.message}` : ""}` : `${r.status.toUpperCase()}: ${r.error?.message ?? ""}`}`,
    ),
  ].join("\n");
  return { text, data: { batch_id: batch.batchId, results, counts: batch.counts, running: batch.running } };
}

const taskField = z
  .object({
    task: z.string(),
    directory: z.string().optional(),
    title: z.string().optional(),
    model: z.string().optional(),
    agent: z.string().optional(),
    files: z.array(z.string()).optional(),
    command: z.string().optional(),
    permissions: z.enum(["auto", "readonly", "agent"]).optional(),
    rules: rulesField.optional(),
  })
  // A key a task does not take (checks, approvals: the batch's own) must not be dropped in silence.
  .strict();

export const ocDelegateParallel = defineTool({
  name: "oc_delegate_parallel",
  title: "Parallel tasks",
  description: `Independent tasks at once, one session each (fields as in oc_delegate; ${DEFAULT_CONCURRENCY} at a time; budgets cover the batch). One failing never fails the others.`,
  toolset: "delegate",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  input: {
    tasks: z.array(taskField).min(1).max(MAX_CONCURRENCY),
    concurrency: clamped(1, MAX_CONCURRENCY, true).optional(),
    timeout_s: timeoutField,
    detail: detailField,
    interrupt_on_cancel: interruptOnCancelField,
    approvals: approvalsField,
    max_tokens: maxTokensField,
    max_cost_usd: maxCostField,
    request_id: requestIdField,
  },
  output: {
    results: z.array(z.unknown()),
    running: z.array(z.string()),
  },
  async run(args, ctx) {
    const conductor = await ctx.conductor();
    const onProgress = (i: number, p: { message: string }) => ctx.progress(`task ${i + 1}: ${p.message}`);
    if (conductor.queueSettings) {
      // One job per task on the fleet (docs/scaling.md); request_id names the batch on every MCP server.
      const tasks = args.tasks.map((t) => ({ ...t, permissions: t.rules ?? t.permissions }));
      const queued = await conductor.parallel(tasks, {
        requestId: args.request_id,
        timeoutMs: timeoutMs(args.timeout_s),
        detail: args.detail,
        signal: ctx.signal,
        onProgress,
        maxTokens: args.max_tokens,
        maxCostUsd: args.max_cost_usd,
      });
      await afterCancel(ctx, conductor, queued.running, args.interrupt_on_cancel);
      return batchAnswer(queued as ParallelSummary & { batchId: string });
    }
    const onBlocked = approvalHandler(ctx, conductor, args.approvals);
    // Names the batch in the task records the web console reads.
    const batchId = args.request_id ?? `batch_${randomUUID().slice(0, 8)}`;
    const start = (onSession?: (id: string, index: number) => Promise<void>) =>
      conductor.parallel(
        args.tasks.map((t) => ({ ...t, permissions: t.rules ?? t.permissions })),
        {
          concurrency: args.concurrency,
          timeoutMs: timeoutMs(args.timeout_s),
          detail: args.detail,
          signal: ctx.signal,
          onProgress,
          onBlocked,
          maxTokens: args.max_tokens,
          maxCostUsd: args.max_cost_usd,
          onSession: async (id, index) => {
            const t = args.tasks[index]!;
            await recordTaskStart(ctx, conductor, {
              sessionId: id,
              tool: "oc_delegate_parallel",
              task: t.task,
              batchId,
              index,
              title: t.title,
              directory: t.directory,
              model: t.model,
              agent: t.agent,
              maxTokens: args.max_tokens,
              maxCostUsd: args.max_cost_usd,
            });
            await onSession?.(id, index);
          },
        },
      );
    // A repeat waits for the first call's sessions (as oc_wait would) instead of starting anything.
    const replay = async (record: StartRecord): Promise<ParallelSummary & { replayed: true }> => ({
      ...(await conductor.waitAll(
        args.tasks.map((_, index) => record.sessionIds[index]),
        { timeoutMs: timeoutMs(args.timeout_s), detail: args.detail, signal: ctx.signal, onBlocked, onProgress },
      )),
      replayed: true,
    });
    const batch: ParallelSummary & { replayed?: true } = await startOnce(ctx, "oc_delegate_parallel", args.request_id, args.tasks.length, start, replay);
    await afterCancel(ctx, conductor, batch.running, args.interrupt_on_cancel);
    const results = batch.results.map((r) =>
      r.sessionId === undefined ? { index: r.index, status: r.status, answer: "", error: r.error } : { index: r.index, ...turnData(r) },
    );
    await Promise.all(results.map((r) => ("session_id" in r && r.session_id ? recordTaskEnd(ctx, r as TurnData) : undefined)));
    const counts = Object.entries(batch.counts)
      .map(([k, v]) => `${v} ${k}`)
      .join(", ");
    const text = [
      ...(batch.replayed ? [`REPLAYED request_id ${args.request_id}: the first call's sessions, nothing new was started.`] : []),
      `${args.tasks.length} tasks: ${counts}${batch.budget ? ` · budget ${batch.budget.tokens} tokens, $${batch.budget.cost.toFixed(4)}${batch.budget.exceeded ? " (exceeded: stopped)" : ""}` : ""}`,
      ...results.map(
        (r) => `\n[${r.index + 1}] ${"session_id" in r && r.session_id ? turnText(r as TurnData) : `${r.status.toUpperCase()}: ${r.error?.message ?? ""}`}`,
      ),
    ].join("\n");
    const budget = batch.budget && {
      tokens: batch.budget.tokens,
      cost: batch.budget.cost,
      exceeded: batch.budget.exceeded,
      max_tokens: batch.budget.maxTokens,
      max_cost_usd: batch.budget.maxCostUsd,
    };
    return {
      text,
      data: { results, counts: batch.counts, running: batch.running, ...(budget ? { budget } : {}), ...(batch.replayed ? { replayed: true } : {}) },
    };
  },
});
