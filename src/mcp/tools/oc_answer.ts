import { z } from "zod";
import { UsageError } from "../../core/errors.js";
import { defineTool } from "../tool.js";

export const ocAnswer = defineTool({
  name: "oc_answer",
  title: "Answer a permission request or question",
  description:
    "Answer a blocked agent. per_...: decision (reject + message lets it continue with your feedback). que_...: answers (labels per question) or reject. Then oc_wait.",
  toolset: "approve",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  input: {
    request_id: z.string().min(1),
    decision: z.enum(["once", "always", "reject"]).optional(),
    message: z.string().optional(),
    answers: z.array(z.array(z.string())).optional(),
    reject: z.boolean().optional(),
  },
  output: { request_id: z.string(), answered: z.boolean(), reply: z.string() },
  async run(args, ctx) {
    const conductor = await ctx.conductor();
    if (args.request_id.startsWith("que_")) {
      if (!args.reject && !args.answers) throw new UsageError('A question needs `answers` (e.g. [["Blue"]]) or `reject: true`.');
      await conductor.answer({ questionId: args.request_id, answers: args.answers, reject: args.reject });
      const reply = args.reject ? "rejected" : JSON.stringify(args.answers);
      return { text: `Question ${args.request_id} ${args.reject ? "dismissed" : `answered ${reply}`}. Call oc_wait to follow the session.`, data: { request_id: args.request_id, answered: true, reply } };
    }
    if (!args.decision) throw new UsageError('A permission request needs `decision`: "once", "always" or "reject".');
    await conductor.answer({ requestId: args.request_id, decision: args.decision, message: args.message });
    return { text: `Permission ${args.request_id}: ${args.decision}. Call oc_wait to follow the session.`, data: { request_id: args.request_id, answered: true, reply: args.decision } };
  },
});
