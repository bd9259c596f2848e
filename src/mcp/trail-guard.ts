// While the audit trail or the task records cannot be written, every tool answer says so (a warning
// line, and `unwritable` in the structured result); with OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 a call
// that can change files first writes its audit line (outcome `started`) and is refused, before any
// work, when that line cannot be written. Kept apart from register-tool.ts, which calls both.
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Config } from "../config.js";
import type { AuditEntry, AuditLog } from "../core/governance/audit.js";
import { unwritableText, type Trail } from "../core/governance/trail-health.js";
import { auditEntry, isAudited } from "./audit-entry.js";
import type { ToolAnswer, ToolDef } from "./tool-def.js";

type Args = Record<string, unknown>;

/** Whether the call can change files (an audited call, unless its tool says otherwise). */
export function changesFiles(def: ToolDef, args: Args): boolean {
  if (!isAudited(def, args)) return false;
  return def.audit?.changesFiles ? def.audit.changesFiles(args) : true;
}

export interface GuardOptions {
  config: Pick<Config, "auditRequired">;
  audit?: AuditLog;
  /** The entry as it will be written (scrubbed of secrets). */
  prepare(entry: Omit<AuditEntry, "time">): Omit<AuditEntry, "time">;
}

/** The refusal of a call that can change files while its audit line cannot be written (OPENCODE_CONDUCTOR_AUDIT_REQUIRED). */
export async function refusedWithoutAudit(
  def: ToolDef,
  args: Args,
  o: GuardOptions,
  client?: { name?: string; version?: string },
): Promise<ToolAnswer<Record<string, unknown>> | undefined> {
  if (!o.config.auditRequired || !o.audit?.writer || !changesFiles(def, args)) return undefined;
  const entry = { ...auditEntry(def, args, { isError: false }, client), outcome: "started" };
  const { written } = await o.audit.append(o.prepare(entry), { nowOrNever: true });
  if (written) return undefined;
  const health = o.audit.writer.health();
  return {
    isError: true,
    text: `${def.name} refused, nothing was started: ${unwritableText("audit trail", health)}; OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 refuses work that can change files until it can be. Fix the file or its folder (permissions, free space): it is tried again every few seconds, and calls that only read go on meanwhile.`,
    data: { refused: "audit trail unwritable", audit_trail: health },
  };
}

/** The result with a warning for each trail that cannot be written now (unchanged when all can). */
export function withTrailWarnings(result: CallToolResult, trails: Trail[], config: Pick<Config, "auditRequired">): CallToolResult {
  const down = trails.flatMap((t) => {
    const health = t.writer.health();
    return health.writable ? [] : [{ name: t.name, ...health }];
  });
  if (down.length === 0) return result;
  const consequence = (name: Trail["name"]) =>
    name === "task records"
      ? "the web console does not see this work until then"
      : config.auditRequired
        ? "work that can change files is refused until then"
        : "calls go on meanwhile (OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 would refuse work that can change files)";
  const text = `WARNING: ${down.map((h) => `${unwritableText(h.name, h)}; ${consequence(h.name)}`).join(". Also ")}.`;
  const unwritable = down.map((h) => ({ file: h.name, path: h.path, error: h.error, since: h.since, held: h.held, dropped: h.dropped }));
  return {
    ...result,
    content: [...result.content, { type: "text", text }],
    ...(result.structuredContent ? { structuredContent: { ...result.structuredContent, unwritable } } : {}),
  };
}
