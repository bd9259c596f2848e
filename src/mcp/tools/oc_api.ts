// oc_api: calls any opencode HTTP operation when no dedicated tool fits. The call itself
// (../api/call-tool.ts: the operation table, the catalog, the Ajv checks) is loaded on the first
// call, not with the server: none of it is needed to list the tool.
import { z } from "zod";
import { clamped } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";
import type * as CallTool from "../api/call-tool.js";

let loaded: typeof CallTool | undefined;
/** Before any call is checked or run (register-tool.ts): the audit decision reads the operation table. */
const load = async () => (loaded ??= await import("../api/call-tool.js"));

export const ocApi = defineTool({
  name: "oc_api",
  title: "Call the API",
  description: "Call an opencode HTTP operation when no tool fits: operation id, or method + path. Checked against the spec first.",
  toolset: "api",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  // In read-only mode it sends GETs only (checked in run); a GET changes nothing and is not audited.
  readOnlyMode: "self-checked",
  audit: {
    when: (args) => (loaded ? loaded.sentMethod(args) !== "get" : true),
    detail: (args) => ({
      operation:
        typeof args.operation === "string" && args.operation ? args.operation : `${String(args.method ?? "").toUpperCase()} ${String(args.path ?? "")}`,
    }),
  },
  input: {
    operation: z.string().optional(),
    method: z.string().optional(),
    path: z.string().optional(),
    params: z.record(z.string(), z.unknown()).optional(),
    query: z.record(z.string(), z.unknown()).optional(),
    body: z.unknown().optional(),
    directory: z.string().optional(),
    max_chars: clamped(100, 1_000_000, true).optional(),
  },
  output: {
    result: z.unknown(),
    truncated: z.boolean(),
  },
  load,
  run: async (args, ctx) => (await load()).callApi(args, ctx),
});
