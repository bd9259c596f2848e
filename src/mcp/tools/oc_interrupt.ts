import { z } from "zod";
import { sessionIdField } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";
import { stoppedAnswer } from "../placed-answer.js";

export const ocInterrupt = defineTool({
  name: "oc_interrupt",
  title: "Interrupt a session",
  description: "Stop a session's running turn (like Esc); its history stays.",
  toolset: "delegate",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  audit: { changesFiles: () => false },
  input: { session_id: sessionIdField },
  output: { was_running: z.boolean() },
  async run(args, ctx) {
    const conductor = await ctx.conductor(args.session_id);
    // A session's turn; with a queue, a task or batch is taken off the queue or stopped by its worker.
    return stoppedAnswer(await conductor.interrupt(args.session_id));
  },
});
