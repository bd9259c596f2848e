import { afterCancel, approvalsField, detailField, interruptOnCancelField, sessionIdField, timeoutField, waitOptions } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";
import { isQueued, queuedAnswer } from "../queued.js";
import { batchAnswer } from "./oc_delegate_parallel.js";
import { turnData, turnOutput, turnText } from "../turn-answer.js";

export const ocWait = defineTool({
  name: "oc_wait",
  title: "Wait for a session",
  description: 'Wait for a session\'s turn to end; returns what oc_delegate returns. Use after "running" or oc_answer.',
  toolset: "delegate",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  input: {
    session_id: sessionIdField,
    timeout_s: timeoutField,
    detail: detailField,
    interrupt_on_cancel: interruptOnCancelField,
    approvals: approvalsField,
  },
  output: turnOutput,
  async run(args, ctx) {
    const conductor = await ctx.conductor(args.session_id);
    if (isQueued(conductor, args.session_id)) {
      // A task id, or a batch id (oc_delegate_parallel's request_id): from any MCP server of the fleet.
      const queue = (await conductor.taskQueue())!;
      const { onBlocked: _, ...wait } = waitOptions(ctx, conductor, args);
      if ((await queue.batchSize(args.session_id)) !== undefined) {
        const batch = batchAnswer(await queue.waitBatch(args.session_id, { ...wait, onTaskProgress: (i, p) => ctx.progress(`task ${i + 1}: ${p.message}`) }));
        // The batch as one turn: running while any task runs, done when all are, else error (see results).
        const statuses = batch.data.results.map((r) => r.status);
        const status = statuses.includes("running") ? ("running" as const) : statuses.every((s) => s === "done") ? ("done" as const) : ("error" as const);
        return { text: batch.text, data: { session_id: args.session_id, status, answer: "", ...batch.data } };
      }
      const r = await queue.wait(args.session_id, wait);
      await afterCancel(ctx, conductor, [args.session_id], args.interrupt_on_cancel);
      return queuedAnswer(r);
    }
    const summary = await conductor.wait(args.session_id, waitOptions(ctx, conductor, args));
    await afterCancel(ctx, conductor, [args.session_id], args.interrupt_on_cancel);
    const data = turnData(summary);
    return { text: turnText(data), data };
  },
});
