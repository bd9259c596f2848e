import { z } from "zod";
import { detailField, sessionIdField } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";
import { isQueued, queuedAnswer } from "../queued.js";
import { turnData, turnText } from "../turn-answer.js";

export const ocResult = defineTool({
  name: "oc_result",
  title: "Session state",
  description: "A session's state now: idle, busy or retry (model failing), pending requests, last turn's result.",
  toolset: "delegate",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: { session_id: sessionIdField, detail: detailField },
  output: {
    state: z.enum(["idle", "busy", "retry"]),
  },
  async run(args, ctx) {
    const conductor = await ctx.conductor(args.session_id);
    if (isQueued(conductor, args.session_id)) {
      const q = await (await conductor.taskQueue())!.read(args.session_id);
      const { text, data } = queuedAnswer(q);
      const state = q.status === "running" ? ("busy" as const) : ("idle" as const);
      return { text: `Task is ${q.task.state}.\n${text}`, data: { state, ...data } };
    }
    const r = await conductor.result(args.session_id, { detail: args.detail });
    const data = {
      state: r.state,
      ...(r.retry ? { retry: { attempt: r.retry.attempt, message: r.retry.message, next_at: r.retry.nextAt } } : {}),
      ...turnData(r.last),
    };
    const retry = r.retry ? ` (model retry ${r.retry.attempt}: ${r.retry.message})` : "";
    return { text: `Session is ${r.state}${retry}.\n${turnText(data)}`, data };
  },
});
