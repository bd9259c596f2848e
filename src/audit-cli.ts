// `opencode-conductor audit`: the audit trail for people, one line per entry, newest last.
import { parseArgs } from "node:util";
import { formatAuditEntry, readAuditPage } from "./core/governance/audit.js";
import { AUDIT_TIME_FORMATS, auditTime } from "./core/governance/audit-time.js";
import { UsageError } from "./core/errors.js";

export const AUDIT_HELP = `Usage: opencode-conductor audit [--session ID] [--tool NAME] [--since TIME] [--until TIME] [--limit N] [--before CURSOR] [--json]
Prints the audit trail (OPENCODE_CONDUCTOR_AUDIT, default <state dir>/audit.jsonl, and its rotated
segments), newest last, read from its end: at most --limit entries (default 100) from the newest
8 MB; when older entries may match, stderr gives the command that goes on (--before CURSOR).
TIME is ${AUDIT_TIME_FORMATS}.
--json prints a JSON array of the entries ([] when none match).`;

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
        before: { type: "string" },
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
    try {
      times[flag] = auditTime(`--${flag}`, value);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
  }
  let page;
  try {
    page = await readAuditPage(auditPath, { sessionId: values.session, tool: values.tool, ...times, limit, before: values.before });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message.replace("`before`", "--before")}\n`);
    return 2;
  }
  const entries = page.entries.reverse();
  if (page.next) {
    const again = argv.filter((_, i) => argv[i] !== "--before" && argv[i - 1] !== "--before" && !argv[i]!.startsWith("--before="));
    process.stderr.write(`Older entries may match: opencode-conductor audit ${[...again, "--before", page.next].map(shellWord).join(" ")}\n`);
  }
  if (values.json) {
    // One entry per line inside the array: still easy to grep, and valid JSON when empty.
    process.stdout.write(entries.length === 0 ? "[]\n" : `[\n${entries.map((e) => JSON.stringify(e)).join(",\n")}\n]\n`);
    return 0;
  }
  process.stdout.write(entries.length === 0 ? `No audit entries in ${auditPath} match.\n` : `${entries.map(formatAuditEntry).join("\n")}\n`);
  return 0;
}

/** An argument as a shell reads it back. */
const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`);
