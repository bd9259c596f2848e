import { z } from "zod";
import { DEFAULT_CONCURRENCY, MAX_CONCURRENCY } from "../../core/parallel-limits.js";
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
import { defineTool } from "../tool-def.js";
import { batchAnswer } from "../placed-answer.js";
import { rulesField } from "./oc_delegate.js";

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
  description: "Independent tasks at once, one session each (fields as in oc_delegate); budgets cover the batch.",
  guide: [`oc_delegate_parallel runs ${DEFAULT_CONCURRENCY} tasks at a time by default (concurrency); one task's failure fails no other.`],
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
    isolation: z.enum(["shared", "worktree"]).optional(),
    setup: z.string().optional(),
  },
  output: {
    results: z.array(z.unknown()),
    running: z.array(z.string()),
  },
  async run(args, ctx) {
    const conductor = await ctx.conductor();
    // Here (at most `concurrency` at once) or, with a queue, one job per task on the fleet: the core decides.
    const batch = await conductor.parallel(
      args.tasks.map((t) => ({ ...t, permissions: t.rules ?? t.permissions })),
      {
        concurrency: args.concurrency,
        timeoutMs: timeoutMs(args.timeout_s),
        detail: args.detail,
        signal: ctx.signal,
        onProgress: (i, p) => ctx.progress(`task ${i + 1}: ${p.message}`),
        onBlocked: approvalHandler(ctx, conductor, args.approvals),
        maxTokens: args.max_tokens,
        maxCostUsd: args.max_cost_usd,
        requestId: args.request_id,
        isolation: args.isolation,
        setup: args.setup,
        origin: "oc_delegate_parallel",
      },
    );
    await afterCancel(ctx, conductor, batch.running, args.interrupt_on_cancel);
    return batchAnswer(batch, args.request_id);
  },
  // As an MCP task: the same batch, answered once its first task has a session.
  async task(args, ctx) {
    const conductor = await ctx.conductor();
    return conductor.delegations.parallel(
      args.tasks.map((t) => ({ ...t, permissions: t.rules ?? t.permissions })),
      {
        concurrency: args.concurrency,
        timeoutMs: args.timeout_s === undefined ? undefined : timeoutMs(args.timeout_s),
        detail: args.detail,
        maxTokens: args.max_tokens,
        maxCostUsd: args.max_cost_usd,
        requestId: args.request_id,
        isolation: args.isolation,
        setup: args.setup,
        origin: "oc_delegate_parallel",
      },
    );
  },
  // After an approval round: the same sessions, by task, as a repeated request_id waits for them.
  async resume(args, ctx, sessions) {
    const conductor = await ctx.conductor();
    const batch = await conductor.resumeBatch(
      args.tasks.map((_, index) => sessions[index] ?? undefined),
      {
        timeoutMs: timeoutMs(args.timeout_s),
        detail: args.detail,
        signal: ctx.signal,
        onBlocked: approvalHandler(ctx, conductor, args.approvals),
        onProgress: (i, p) => ctx.progress(`task ${i + 1}: ${p.message}`),
      },
    );
    await afterCancel(ctx, conductor, batch.running, args.interrupt_on_cancel);
    return batchAnswer(batch);
  },
});
