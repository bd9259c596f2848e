import { z } from "zod";
import { DEFAULT_CONCURRENCY, MAX_CONCURRENCY } from "../../core/parallel.js";
import { afterCancel, detailField, interruptOnCancelField, timeoutField, timeoutMs } from "../common.js";
import { defineTool } from "../tool.js";
import { turnData, turnText, type TurnData } from "../turn-answer.js";
import { ruleField } from "./oc_delegate.js";

const taskField = z.object({
  task: z.string().min(1),
  directory: z.string().optional(),
  title: z.string().optional(),
  model: z.string().optional(),
  agent: z.string().optional(),
  files: z.array(z.string()).optional(),
  command: z.string().optional(),
  permissions: z.enum(["auto", "readonly", "agent"]).optional(),
  rules: z.array(ruleField).optional(),
});

export const ocDelegateParallel = defineTool({
  name: "oc_delegate_parallel",
  title: "Run several tasks in parallel",
  description:
    `Run independent tasks at once, one session each (fields as in oc_delegate; ${DEFAULT_CONCURRENCY} at a time by default). ` +
    'A failing task never fails the others. Results in input order; "running" ones: oc_wait each.',
  toolset: "delegate",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  input: {
    tasks: z.array(taskField).min(1).max(MAX_CONCURRENCY),
    concurrency: z.number().int().min(1).max(MAX_CONCURRENCY).optional(),
    timeout_s: timeoutField,
    detail: detailField,
    interrupt_on_cancel: interruptOnCancelField,
  },
  output: {
    results: z.array(z.looseObject({ index: z.number(), status: z.string() })),
    counts: z.record(z.string(), z.number()),
    running: z.array(z.string()),
  },
  async run(args, ctx) {
    const conductor = await ctx.conductor();
    const batch = await conductor.parallel(
      args.tasks.map((t) => ({ ...t, permissions: t.rules ?? t.permissions })),
      { concurrency: args.concurrency, timeoutMs: timeoutMs(args.timeout_s), detail: args.detail, signal: ctx.signal, onProgress: (i, p) => ctx.progress(`task ${i + 1}: ${p.message}`) },
    );
    await afterCancel(ctx, conductor, batch.running, args.interrupt_on_cancel);
    const results = batch.results.map((r) =>
      r.sessionId === undefined ? { index: r.index, status: r.status, answer: "", error: r.error } : { index: r.index, ...turnData(r) },
    );
    const counts = Object.entries(batch.counts).map(([k, v]) => `${v} ${k}`).join(", ");
    const text = [
      `${args.tasks.length} tasks: ${counts}`,
      ...results.map((r) => `\n[${r.index + 1}] ${"session_id" in r && r.session_id ? turnText(r as TurnData) : `${r.status.toUpperCase()}: ${r.error?.message ?? ""}`}`),
    ].join("\n");
    return { text, data: { results, counts: batch.counts, running: batch.running } };
  },
});
