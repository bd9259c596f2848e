// Which tool calls are audited, and what their audit line says: as each tool declares (ToolDef.audit);
// by default every call of a tool that is not read-only.
import type { AuditEntry } from "../core/governance/audit.js";
import { digestPrompt } from "../core/governance/prompt-digest.js";
import type { ToolDef } from "./tool-def.js";

type Args = Record<string, unknown>;
type Data = Record<string, unknown>;

export function isAudited(def: ToolDef, args: Args): boolean {
  return def.audit?.when ? def.audit.when(args) : !def.annotations.readOnlyHint;
}

const str = (v: unknown) => (typeof v === "string" && v ? v : undefined);
const num = (v: unknown) => (typeof v === "number" ? v : undefined);

export function auditEntry(
  def: ToolDef,
  args: Args,
  outcome: { data?: Data; isError: boolean; error?: string },
  client?: { name?: string; version?: string },
): Omit<AuditEntry, "time"> {
  const data = outcome.data ?? {};
  const prompt = str(args.task) ?? str(args.message) ?? str(args.question);
  const files = Array.isArray(data.files) ? (data.files as Array<{ path?: string }>).flatMap((f) => (f.path ? [f.path] : [])) : undefined;
  const tokens = num((data.tokens as { total?: unknown } | undefined)?.total) ?? num(data.tokens);
  const results = Array.isArray(data.results) ? (data.results as Data[]) : undefined;
  return {
    tool: def.name,
    ...(client ? { client } : {}),
    ...((str(data.session_id) ?? str(args.session_id)) ? { session_id: str(data.session_id) ?? str(args.session_id) } : {}),
    ...((str(args.directory) ?? str(data.directory)) ? { directory: str(args.directory) ?? str(data.directory) } : {}),
    ...((str(data.model) ?? str(args.model)) ? { model: str(data.model) ?? str(args.model) } : {}),
    ...(str(args.decision) ? { decision: str(args.decision), by: "model" as const } : args.answers ? { decision: "answered", by: "model" as const } : {}),
    ...(files?.length ? { files } : {}),
    ...(tokens !== undefined ? { tokens } : {}),
    ...(num(data.cost) !== undefined ? { cost: num(data.cost) } : {}),
    outcome: outcome.isError ? "error" : (str(data.status) ?? "ok"),
    ...(outcome.error ? { error: outcome.error } : {}),
    ...(prompt ? { prompt: digestPrompt(prompt) } : {}),
    ...detailOf({ ...auditDetail(def, args, results)?.detail, ...governance(args, data) }),
  };
}

const detailOf = (detail: Record<string, unknown>) => (Object.keys(detail).length > 0 ? { detail } : {});

/** Gate rounds, budget totals and idempotent starts, without check output (it may be long). */
function governance(args: Args, data: Data): Record<string, unknown> {
  const checks = Array.isArray(data.checks)
    ? (data.checks as Data[]).map((c) => ({ round: c.round, command: c.command, passed: c.passed, exit: c.exit }))
    : undefined;
  return {
    ...(str(args.request_id) ? { request_id: args.request_id } : {}),
    ...(data.replayed === true ? { replayed: true } : {}),
    ...(checks ? { checks } : {}),
    ...(data.budget ? { budget: data.budget } : {}),
  };
}

function auditDetail(def: ToolDef, args: Args, results: Data[] | undefined): Pick<AuditEntry, "detail"> | undefined {
  if (def.audit?.detail) return { detail: def.audit.detail(args) };
  if (results) return { detail: { sessions: results.map((r) => ({ session_id: str(r.session_id), status: str(r.status) })) } };
  return undefined;
}
