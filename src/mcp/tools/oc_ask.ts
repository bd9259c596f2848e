import { z } from "zod";
import { UsageError } from "../../core/errors.js";
import { validPromptText } from "../../core/inputs/prompt-text.js";
import { directoryField, timeoutField, timeoutMs } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";

export const ocAsk = defineTool({
  name: "oc_ask",
  title: "Ask a question",
  description: "Ask a read-only question about a project (no edits or commands); its session is deleted after.",
  toolset: "delegate",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  input: {
    question: z.string(),
    model: z.string().optional(),
    directory: directoryField,
    files: z.array(z.string()).optional(),
    timeout_s: timeoutField,
  },
  output: {
    answer: z.string(),
  },
  async run(args, ctx) {
    if (!args.question.trim()) throw new UsageError("`question` is empty: ask something about the project.");
    validPromptText(args.question, "question", { files: true });
    const conductor = await ctx.conductor();
    const r = await conductor.delegate({
      task: args.question,
      title: "oc_ask",
      model: args.model,
      directory: args.directory,
      files: args.files,
      permissions: "readonly",
      timeoutMs: timeoutMs(args.timeout_s),
      signal: ctx.signal,
    });
    // A one-shot question leaves nothing behind (abort first: a busy session keeps running after delete).
    const { deleteSession } = await import("../../core/sessions/actions.js");
    await deleteSession(conductor, r.sessionId, { directory: r.directory }).catch(() => undefined);
    const data = {
      status: r.status,
      answer: r.answer,
      ...(r.model ? { model: r.model } : {}),
      ...(r.error ? { error: r.error } : {}),
      ...(r.tokens ? { tokens: r.tokens.total } : {}),
      ...(r.cost !== undefined ? { cost: r.cost } : {}),
    };
    const text = r.error
      ? `${r.status.toUpperCase()}: ${r.error.name}: ${r.error.message}`
      : r.status === "done"
        ? r.answer
        : `${r.status.toUpperCase()}: no answer (the question was cancelled and its session removed).`;
    return { text, data };
  },
});
