import { z } from "zod";
import { detailField, sessionIdField } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";
import { stateAnswer } from "../placed-answer.js";

export const ocResult = defineTool({
  name: "oc_result",
  title: "Session state",
  description: "A session's state now (idle, busy, retry), pending requests, last turn's result.",
  toolset: "delegate",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: { session_id: sessionIdField, detail: detailField },
  output: {
    state: z.enum(["idle", "busy", "retry", "unreachable"]),
  },
  async run(args, ctx) {
    const conductor = await ctx.conductor(args.session_id);
    return stateAnswer(await conductor.result(args.session_id, { detail: args.detail }));
  },
});
