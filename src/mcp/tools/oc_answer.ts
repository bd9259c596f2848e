import { z } from "zod";
import { UsageError } from "../../core/errors.js";
import { defineTool } from "../tool.js";

export const ocAnswer = defineTool({
  name: "oc_answer",
  title: "Answer a permission request or question",
  description:
    "Answer what an agent waits on (ids from oc_pending or a BLOCKED result). Permission (per_...): decision once | always | reject; with reject, a message lets the agent continue with your feedback instead of stopping. " +
    "Question (que_...): answers, one list of chosen labels per question, or reject: true to dismiss it. Then call oc_wait to follow the session.",
  toolset: "approve",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  input: {
    request_id: z.string().min(1).describe("per_... or que_..."),
    decision: z.enum(["once", "always", "reject"]).optional().describe("For permissions"),
    message: z.string().optional().describe("With reject: feedback to the agent"),
    answers: z.array(z.array(z.string())).optional().describe("For questions: one list of labels per question"),
    reject: z.boolean().optional().describe("For questions: dismiss it"),
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
