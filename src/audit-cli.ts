// `opencode-conductor audit`: the audit trail for people, one line per entry, newest last.
import { parseArgs } from "node:util";
import { formatAuditEntry, readAudit } from "./core/audit.js";

export const AUDIT_HELP = `Usage: opencode-conductor audit [--session ID] [--tool NAME] [--since TIME] [--until TIME] [--limit N] [--json]
Prints the audit trail (OPENCODE_CONDUCTOR_AUDIT, default <state dir>/audit.jsonl).`;

export async function auditCommand(argv: string[], auditPath: string | undefined): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: { session: { type: "string" }, tool: { type: "string" }, since: { type: "string" }, until: { type: "string" }, limit: { type: "string" }, json: { type: "boolean" } },
      strict: true,
    }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${AUDIT_HELP}\n`);
    return 2;
  }
  if (!auditPath) {
    process.stdout.write("Auditing is off (OPENCODE_CONDUCTOR_AUDIT=off).\n");
    return 0;
  }
  const limit = values.limit === undefined ? 100 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) {
    process.stderr.write(`--limit must be a positive integer, got "${values.limit}"\n`);
    return 2;
  }
  const entries = await readAudit(auditPath, { sessionId: values.session, tool: values.tool, since: values.since, until: values.until, limit });
  const out = values.json ? entries.map((e) => JSON.stringify(e)) : entries.map(formatAuditEntry);
  process.stdout.write(entries.length === 0 ? `No audit entries in ${auditPath} match.\n` : `${out.join("\n")}\n`);
  return 0;
}
