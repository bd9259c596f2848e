import { z } from "zod";
import { afterCancel, approvalsField, detailField, interruptOnCancelField, sessionIdField, timeoutField, waitOptions } from "../common.js";
import { defineTool } from "../tool.js";
import { turnData, turnOutput, turnText } from "../turn-answer.js";

export const ocSend = defineTool({
  name: "oc_send",
  title: "Send a message to a session",
  description:
    'Send a follow-up to a session. queue (default): runs after the current turn; answers at once (then oc_wait). steer: interrupts the current turn, continues with this message (history kept) and waits.',
  toolset: "delegate",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  input: {
    session_id: sessionIdField,
    message: z.string().min(1),
    delivery: z.enum(["queue", "steer"]).optional(),
    wait: z.boolean().optional().describe("Default: true for steer"),
    model: z.string().optional(),
    agent: z.string().optional(),
    timeout_s: timeoutField,
    detail: detailField,
    interrupt_on_cancel: interruptOnCancelField,
    approvals: approvalsField,
  },
  output: { delivery: z.enum(["queue", "steer"]), ...turnOutput },
  async run(args, ctx) {
    const conductor = await ctx.conductor(args.session_id);
    const r = await conductor.send(args.session_id, args.message, {
      delivery: args.delivery,
      wait: args.wait,
      model: args.model,
      agent: args.agent,
      ...waitOptions(ctx, conductor, args),
    });
    await afterCancel(ctx, conductor, [args.session_id], args.interrupt_on_cancel);
    const data = { delivery: r.delivery, ...turnData(r) };
    return { text: `Sent (${r.delivery}).\n${turnText(data)}`, data };
  },
});
