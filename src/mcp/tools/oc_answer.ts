import { z } from "zod";
import type { Conductor } from "../../core/conductor.js";
import { UnknownRequestError, UsageError } from "../../core/errors.js";
import { defineTool } from "../tool-def.js";

/** Answers through the core; an unknown id gets this tool's next step (the core's names `sessionId`, which oc_answer does not take). */
async function answered(conductor: Conductor, answer: Parameters<Conductor["answer"]>[0]): Promise<void> {
  try {
    await conductor.answer(answer);
  } catch (error) {
    if (!(error instanceof UnknownRequestError)) throw error;
    throw new UsageError(`${error.notFound}. It may be answered already, or belong to a session in another project directory.`, "pending");
  }
}

export const ocAnswer = defineTool({
  name: "oc_answer",
  title: "Answer an approval",
  description:
    "Answer a blocked agent, then oc_wait. per_…: decision; que_/frm_…: answers (labels per question). decision reject (+ message: feedback) refuses either.",
  toolset: "approve",
  guide: [
    'Status "blocked" means the agent waits for a permission or a question: answer with oc_answer (the result shows the exact call; oc_pending lists what waits), then oc_wait. When your client supports elicitation, the user is asked directly instead.',
  ],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  // An approval lets the agent go on (and write); a rejection only stops it.
  audit: { changesFiles: (args) => args.decision !== "reject" },
  input: {
    request_id: z.string().min(1),
    decision: z.enum(["once", "always", "reject"]).optional(),
    message: z.string().optional(),
    answers: z.array(z.array(z.string())).optional(),
  },
  output: { answered: z.boolean() },
  async run(args, ctx) {
    const conductor = await ctx.conductor();
    // A question is `que_…` on opencode 1.x and a form `frm_…` on 2.x.
    if (args.request_id.startsWith("que_") || args.request_id.startsWith("frm_")) {
      const reject = args.decision === "reject";
      if (!reject && !args.answers?.length) throw new UsageError('A question needs `answers` (e.g. [["Blue"]]) or `decision: "reject"`.');
      await answered(conductor, { questionId: args.request_id, answers: args.answers, reject });
      const reply = reject ? "rejected" : JSON.stringify(args.answers);
      return {
        text: `Question ${args.request_id} ${reject ? "dismissed" : `answered ${reply}`}. Call oc_wait to follow the session.`,
        data: { request_id: args.request_id, answered: true, reply },
      };
    }
    if (!args.decision) throw new UsageError('A permission request needs `decision`: "once", "always" or "reject".');
    await answered(conductor, { requestId: args.request_id, decision: args.decision, message: args.message });
    return {
      text: `Permission ${args.request_id}: ${args.decision}. Call oc_wait to follow the session.`,
      data: { request_id: args.request_id, answered: true, reply: args.decision },
    };
  },
});
