import { z } from "zod";
import { sessionIdField } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";
import { turnData, turnText } from "../turn-answer.js";

export const ocSend = defineTool({
  name: "oc_send",
  title: "Message a session",
  description:
    "Follow up in a session; answers at once (then oc_wait). queue (default): after the current turn; steer: joins the running turn (1.x: stops it first).",
  toolset: "delegate",
  guide: ["oc_send adds to a session (queue) or redirects it (steer), then oc_wait; oc_interrupt stops it; oc_result reads its state without waiting."],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  audit: { detail: (args) => ({ delivery: args.delivery ?? "queue" }) },
  input: {
    session_id: sessionIdField,
    message: z.string(),
    delivery: z.enum(["queue", "steer"]).optional(),
    model: z.string().optional(),
    agent: z.string().optional(),
  },
  // Sending and waiting are separate calls (as with oc_delegate wait:false): oc_wait carries the
  // timeout, detail, approvals and cancel options once.
  output: { status: z.string() },
  async run(args, ctx) {
    const conductor = await ctx.conductor(args.session_id);
    const r = await conductor.send(args.session_id, args.message, { delivery: args.delivery, wait: false, model: args.model, agent: args.agent });
    const data = { delivery: r.delivery, ...turnData(r) };
    return { text: `Sent (${r.delivery}).\n${turnText(data)}`, data };
  },
});
