import { z } from "zod";
import { clamped } from "../shared-fields.js";
import { formatAuditEntry, readAuditPage } from "../../core/governance/audit.js";
import { defineTool } from "../tool-def.js";

/** A page holds at most this much of the trail (about 250 entries): the answer stays small and quick whatever `limit` says. */
export const PAGE_BYTES = 128 * 1024;

export const ocAudit = defineTool({
  name: "oc_audit",
  title: "Read the audit trail",
  description:
    "Calls that changed something (delegations, messages, approvals, session actions, API writes), newest last: time, tool, client, session, model, outcome, files, tokens, cost. Filter by session, tool, time; read from the newest back, a page at a time (`next`).",
  toolset: "audit",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: {
    session_id: z.string().optional(),
    tool: z.string().optional(),
    since: z.string().optional().describe("ISO time, or an age: 30m, 2h, 7d"),
    until: z.string().optional(),
    limit: clamped(1, 1000, true).optional(),
    before: z.string().optional().describe("`next` of an earlier answer: older entries"),
  },
  output: { entries: z.array(z.looseObject({ time: z.string(), tool: z.string() })), path: z.string().optional(), next: z.string().optional() },
  async run(args, ctx) {
    const path = ctx.config.auditPath;
    if (!path) return { text: "Auditing is off (OPENCODE_CONDUCTOR_AUDIT=off).", data: { entries: [] } };
    const page = await readAuditPage(path, {
      sessionId: args.session_id,
      tool: args.tool,
      since: args.since,
      until: args.until,
      limit: args.limit,
      before: args.before,
      maxBytes: PAGE_BYTES,
    });
    const entries = page.entries.reverse();
    const more = page.next
      ? `\nOlder entries may match: oc_audit ${JSON.stringify({ ...args, before: page.next })} (this page read ${(page.scanned / 1024 / 1024).toFixed(1)} MB${page.reached ? `, back to ${page.reached}` : ""}).`
      : "";
    const text = `${entries.length === 0 ? "No audit entries match." : entries.map(formatAuditEntry).join("\n")}${more}`;
    return { text, data: { entries: entries as unknown as Array<{ time: string; tool: string }>, path, ...(page.next ? { next: page.next } : {}) } };
  },
});
