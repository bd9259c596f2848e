import { z } from "zod";
import { requestIdField, sessionIdField } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";
import { sendAnswer } from "../turn-answer.js";

export const ocSend = defineTool({
  name: "oc_send",
  title: "Message a session",
  description: "Message a session; answers at once, then oc_wait. delivery queue (default): after the running turn; steer: into it.",
  toolset: "delegate",
  guide: [
    "oc_send adds to a session (queue) or redirects it (steer; on opencode 1.x this stops the running turn first), then oc_wait; oc_interrupt stops it (history stays); oc_result reads its state without waiting.",
    "Cancelling an oc_send task whose message still waits behind another turn interrupts nothing: opencode 2.0.26 takes the message back; 1.x and the 2.x pre-release cannot, so the cancel is refused saying so (the message runs after that turn; oc_interrupt stops everything).",
  ],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  audit: { detail: (args) => ({ delivery: args.delivery ?? "queue" }) },
  input: {
    session_id: sessionIdField,
    message: z.string(),
    delivery: z.enum(["queue", "steer"]).optional(),
    model: z.string().optional(),
    agent: z.string().optional(),
    request_id: requestIdField,
  },
  // Sending and waiting are separate calls (as with oc_delegate wait:false): oc_wait carries the
  // timeout, detail, approvals and cancel options once.
  output: { status: z.string() },
  async run(args, ctx) {
    const conductor = await ctx.conductor(args.session_id);
    const options = { delivery: args.delivery, model: args.model, agent: args.agent, requestId: args.request_id, origin: "oc_send" };
    return sendAnswer(await conductor.send(args.session_id, args.message, { ...options, wait: false }));
  },
  // As an MCP task: the message on record and sent, then its turn followed to the end (the wait is
  // the task's, as oc_wait's would be); approvals wait for tasks/update (or oc_answer, or the
  // console). On the default conductor, whose ledger finds the session on a private instance or a
  // fleet server as well (placement/run.ts holderOf).
  async task(args, ctx) {
    const conductor = await ctx.conductor();
    return conductor.delegations.send(args.session_id, args.message, {
      delivery: args.delivery,
      model: args.model,
      agent: args.agent,
      requestId: args.request_id,
      origin: "oc_send",
    });
  },
});
