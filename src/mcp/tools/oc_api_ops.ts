// oc_api_ops: the catalogue of opencode's HTTP operations, searched or read one operation at a time
// before calling it with oc_api. The lookup (../api/ops-tool.ts, with the operation table) is loaded
// on the first call, not with the server.
import { z } from "zod";
import { clamped } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";

export const ocApiOps = defineTool({
  name: "oc_api_ops",
  title: "Find API operations",
  description: "Find opencode HTTP operations for oc_api: search → ids, paths, summaries; operation (id or METHOD /path) → its schemas.",
  toolset: "api",
  guide: [
    "oc_api_ops and oc_api reach every opencode HTTP operation when no tool fits (oc_api: an operation id, or method + path; a concrete path fills the path params).",
  ],
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: {
    search: z.string().optional(),
    operation: z.string().optional(),
    limit: clamped(1, 100, true).optional(),
  },
  output: {
    operations: z.array(z.unknown()),
  },
  run: async (args, ctx) => (await import("../api/ops-tool.js")).findOperations(args, ctx),
});
