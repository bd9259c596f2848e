import { afterCancel, approvalsField, detailField, interruptOnCancelField, sessionIdField, timeoutField, waitOptions } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";
import { turnData, turnOutput, turnText } from "../turn-answer.js";

export const ocWait = defineTool({
  name: "oc_wait",
  title: "Wait for a session",
  description:
    'Wait for a session\'s turn to end; returns what oc_delegate returns. Use after "running" or oc_answer.',
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
    const summary = await conductor.wait(args.session_id, waitOptions(ctx, conductor, args));
    await afterCancel(ctx, conductor, [args.session_id], args.interrupt_on_cancel);
    const data = turnData(summary);
    return { text: turnText(data), data };
  },
});
