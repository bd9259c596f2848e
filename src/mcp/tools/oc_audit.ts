import { z } from "zod";
import { clamped } from "../shared-fields.js";
import { formatAuditEntry, readAudit } from "../../core/governance/audit.js";
import { defineTool } from "../tool-def.js";

export const ocAudit = defineTool({
  name: "oc_audit",
  title: "Read the audit trail",
  description:
    "Calls that changed something (delegations, messages, approvals, session actions, API writes), newest last: time, tool, client, session, model, outcome, files, tokens, cost. Filter by session, tool, time.",
  toolset: "audit",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: {
    session_id: z.string().optional(),
    tool: z.string().optional(),
    since: z.string().optional().describe("ISO time, or an age: 30m, 2h, 7d"),
    until: z.string().optional(),
    limit: clamped(1, 1000, true).optional(),
  },
  output: { entries: z.array(z.looseObject({ time: z.string(), tool: z.string() })), path: z.string().optional() },
  async run(args, ctx) {
    const path = ctx.config.auditPath;
    if (!path) return { text: "Auditing is off (OPENCODE_CONDUCTOR_AUDIT=off).", data: { entries: [] } };
    const entries = await readAudit(path, { sessionId: args.session_id, tool: args.tool, since: args.since, until: args.until, limit: args.limit });
    const text = entries.length === 0 ? "No audit entries match." : entries.map(formatAuditEntry).join("\n");
    return { text, data: { entries: entries as unknown as Array<{ time: string; tool: string }>, path } };
  },
});
