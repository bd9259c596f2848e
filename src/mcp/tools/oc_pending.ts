import { z } from "zod";
import { defineTool } from "../tool-def.js";
import { answerCall } from "../turn-answer.js";

export const ocPending = defineTool({
  name: "oc_pending",
  title: "Pending approvals",
  description: "Permissions and questions agents wait on, each with its oc_answer call.",
  toolset: "approve",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: { session_id: z.string().optional() },
  output: {
    requests: z.array(z.unknown()),
  },
  async run(args, ctx) {
    const pending = await (await ctx.conductor(args.session_id)).pending({ sessionId: args.session_id });
    const requests = pending.map((r) =>
      r.kind === "permission"
        ? { kind: r.kind, id: r.id, session_id: r.sessionId, what: r.permission, patterns: r.patterns, answer_with: answerCall(r) }
        : {
            kind: r.kind,
            id: r.id,
            session_id: r.sessionId,
            what: r.questions.map((q) => q.question).join(" / "),
            options: r.questions.flatMap((q) => q.options.map((o) => o.label)),
            answer_with: answerCall(r),
          },
    );
    const text =
      requests.length === 0
        ? "Nothing is waiting for an answer."
        : requests
            .map(
              (r) =>
                `- ${r.kind} ${r.id} (session ${r.session_id}): ${r.what}${r.patterns ? ` ${r.patterns.join(", ")}` : ""}${r.options ? ` [${r.options.join(" | ")}]` : ""}\n  → ${r.answer_with}`,
            )
            .join("\n");
    return { text, data: { requests } };
  },
});
