// `opencode-conductor audit`: the audit trail for people, one line per entry, newest last.
import { parseArgs } from "node:util";
import { formatAuditEntry, readAudit } from "./core/governance/audit.js";

export const AUDIT_HELP = `Usage: opencode-conductor audit [--session ID] [--tool NAME] [--since TIME] [--until TIME] [--limit N] [--json]
Prints the audit trail (OPENCODE_CONDUCTOR_AUDIT, default <state dir>/audit.jsonl).
TIME is an ISO date or time (2026-11-29, 2026-11-29T18:00:00Z) or an age (30m, 2h, 7d: that long ago).
--json prints a JSON array of the entries ([] when none match).`;

const AGE_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Epoch ms of a --since/--until value, or an error that says what is accepted. */
export function parseTime(flag: string, value: string, now = Date.now()): number | Error {
  const age = /^(\d+)([smhd])$/.exec(value.trim());
  if (age) return now - Number(age[1]) * AGE_MS[age[2]!]!;
  // Date.parse also reads loose strings ("1", "March"); only ISO-looking values are taken as times.
  const at = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim()) ? Date.parse(value.trim()) : NaN;
  if (Number.isNaN(at)) {
    const shown = value.length > 200 ? `${value.slice(0, 200)}…` : value;
    return new Error(`${flag} "${shown}" is not a time: give an ISO date or time (2026-11-29, 2026-11-29T18:00:00Z) or an age (30m, 2h, 7d).`);
  }
  return at;
}

export async function auditCommand(argv: string[], auditPath: string | undefined): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        session: { type: "string" },
        tool: { type: "string" },
        since: { type: "string" },
        until: { type: "string" },
        limit: { type: "string" },
        json: { type: "boolean" },
      },
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
  const times: { since?: number; until?: number } = {};
  for (const flag of ["since", "until"] as const) {
    const value = values[flag];
    if (value === undefined) continue;
    const at = parseTime(`--${flag}`, value);
    if (at instanceof Error) {
      process.stderr.write(`${at.message}\n`);
      return 2;
    }
    times[flag] = at;
  }
  const entries = await readAudit(auditPath, { sessionId: values.session, tool: values.tool, ...times, limit });
  if (values.json) {
    // One entry per line inside the array: still easy to grep, and valid JSON when empty.
    process.stdout.write(entries.length === 0 ? "[]\n" : `[\n${entries.map((e) => JSON.stringify(e)).join(",\n")}\n]\n`);
    return 0;
  }
  process.stdout.write(entries.length === 0 ? `No audit entries in ${auditPath} match.\n` : `${entries.map(formatAuditEntry).join("\n")}\n`);
  return 0;
}
