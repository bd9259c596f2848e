import { afterCancel, approvalsField, detailField, interruptOnCancelField, sessionIdField, timeoutField, waitOptions } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";
import { followedAnswer } from "../placed-answer.js";
import { turnOutput } from "../turn-answer.js";

export const ocWait = defineTool({
  name: "oc_wait",
  title: "Wait for a session",
  description: "Wait for a session's turn to end; answers as oc_delegate does.",
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
    // A session id; with a queue also a task or batch id (oc_delegate_parallel's request_id), from any MCP server of the fleet.
    const r = await conductor.wait(args.session_id, waitOptions(ctx, conductor, args));
    if (!r.batch) await afterCancel(ctx, conductor, [args.session_id], args.interrupt_on_cancel);
    return followedAnswer(r);
  },
});
