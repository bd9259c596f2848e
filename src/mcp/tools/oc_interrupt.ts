import { z } from "zod";
import { sessionIdField } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";
import { isQueued, queuedAnswer } from "../queued.js";
import { turnData, turnText } from "../turn-answer.js";

export const ocInterrupt = defineTool({
  name: "oc_interrupt",
  title: "Interrupt a session",
  description: "Stop a session's running turn (like Esc). History stays; go on with oc_send.",
  toolset: "delegate",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  input: { session_id: sessionIdField },
  output: { was_running: z.boolean() },
  async run(args, ctx) {
    const conductor = await ctx.conductor(args.session_id);
    if (isQueued(conductor, args.session_id)) {
      // A queued task is taken off the queue; a running one is stopped by its worker.
      const r = await (await conductor.taskQueue())!.cancel(args.session_id);
      const { text, data } = queuedAnswer(r);
      return {
        text: `${r.wasRunning ? "Interrupted." : r.task.state === "cancelled" ? "Cancelled before it started." : "Nothing was running."}\n${text}`,
        data: { was_running: r.wasRunning, ...data },
      };
    }
    const r = await conductor.interrupt(args.session_id);
    const data = { was_running: r.wasRunning, ...turnData(r) };
    return { text: `${r.wasRunning ? "Interrupted." : "Nothing was running."}\n${turnText(data)}`, data };
  },
});
