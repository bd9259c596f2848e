// oc_status: the opencode server in use and how it was found. The report (../status-report.ts, with
// the spec comparison) is loaded on the first call, not with the server.
import { z } from "zod";
import { directoryField } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";

export const ocStatus = defineTool({
  name: "oc_status",
  title: "Server status",
  description: "The opencode server in use (URL, version, health, default model, how it was found). Call first when connecting fails.",
  toolset: "discover",
  guide: ["oc_status / oc_models / oc_catalog describe the server."],
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: { directory: directoryField, spec_ops: z.boolean().optional().describe("Ops differing from the pin") },
  output: {
    version: z.string(),
    healthy: z.boolean(),
  },
  run: async (args, ctx) => (await import("../status-report.js")).statusReport(args, ctx),
});
