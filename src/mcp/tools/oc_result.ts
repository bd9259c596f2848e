import { z } from "zod";
import { detailField, sessionIdField } from "../common.js";
import { defineTool } from "../tool.js";
import { turnData, turnOutput, turnText } from "../turn-answer.js";

export const ocResult = defineTool({
  name: "oc_result",
  title: "Read a session's state",
  description:
    "Read a session's state without waiting: whether it is idle, busy or retrying a failing model, the requests it waits on, and its last turn's result. Use oc_wait to wait for the end instead.",
  toolset: "delegate",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: { session_id: sessionIdField, detail: detailField },
  output: {
    state: z.enum(["idle", "busy", "retry"]),
    retry: z.object({ attempt: z.number(), message: z.string(), next_at: z.number() }).optional(),
    ...turnOutput,
  },
  async run(args, ctx) {
    const r = await (await ctx.conductor()).result(args.session_id, { detail: args.detail });
    const data = { state: r.state, ...(r.retry ? { retry: { attempt: r.retry.attempt, message: r.retry.message, next_at: r.retry.nextAt } } : {}), ...turnData(r.last) };
    const retry = r.retry ? ` (model retry ${r.retry.attempt}: ${r.retry.message})` : "";
    return { text: `Session is ${r.state}${retry}.\n${turnText(data)}`, data };
  },
});
