// oc_status's report (tools/oc_status.ts holds its definition and loads this on its first call: the
// spec comparison and the compatibility table are nothing a server's start needs).
import { rangeVerdict, supportedRange } from "../core/engine/server/compatibility.js";
import { serverStatus } from "../core/catalog/status.js";
import { featureDetection } from "../core/engine/server/feature-guard.js";
import { changedOperations } from "../core/engine/server/spec-changes.js";
import { loadV2Pin, serverSpec, specFromDocument } from "../core/engine/server/spec.js";
import { consoleCommandLine } from "../console/console-command-line.js";
import type { ToolAnswer, ToolContext } from "./tool-def.js";
import type { QueueStatus } from "../core/queue/status.js";
import { checkTrails, trailsOf, unwritableText } from "../core/governance/trail-health.js";
import type { FileHealth } from "../core/governance/jsonl-writer.js";

/** Whether the audit trail and the task records can be written, tried now. */
async function trailLines(config: Parameters<typeof trailsOf>[0]): Promise<{ text: string; data: Record<string, FileHealth | "off"> }> {
  const data: Record<string, FileHealth | "off"> = { audit_trail: "off" };
  const lines = config.auditPath ? [] : ["audit trail off"];
  for (const { name, ...health } of await checkTrails(trailsOf(config))) {
    data[name === "audit trail" ? "audit_trail" : "task_records"] = health;
    lines.push(health.writable ? `${name} ${health.path}: writable` : `${name.toUpperCase()} UNWRITABLE: ${unwritableText(name, health)}`);
  }
  return { text: `Files: ${lines.join("; ")}.`, data };
}

/** The fleet in a line or two: queue counts, and each worker's host, roots, load and heartbeat. */
function queueLine(q: QueueStatus | { error: string }): string {
  if ("error" in q) return `Queue: unreachable (${q.error}).`;
  const c = q.counts;
  const workers = q.workers.map((w) => `${w.id} on ${w.host} (${w.running}/${w.concurrency}, roots ${w.roots.join(", ") || "none"}, heartbeat ${w.heartbeat})`);
  return `Queue ${q.url}: ${c.waiting} waiting, ${c.active} active, ${c.completed} completed, ${c.failed} failed. Workers: ${workers.join("; ") || "none"}.`;
}

export async function statusReport(
  args: { directory?: string; spec_ops?: boolean },
  ctx: ToolContext,
): Promise<ToolAnswer<{ version: string; healthy: boolean } & Record<string, unknown>>> {
  const conductor = await ctx.conductor();
  const s = await serverStatus(conductor, { directory: args.directory });
  const connection = ctx.connection?.();
  // opencode 2.x: the v2 document the engine read when it connected, measured against the
  // vendored 2.x spec (spec/v2/); 1.x: GET /doc, cached, against the 1.x pin.
  const v2 = await conductor.engine.openApi().catch(() => undefined);
  const spec = v2
    ? await specFromDocument(v2.version, v2.sha256, v2.doc, await loadV2Pin())
    : await serverSpec(conductor.client, featureDetection(conductor.client) ?? { stateDir: ctx.config.stateDir }).catch(() => undefined);
  const changed = spec ? await changedOperations(spec) : [];
  const range = supportedRange();
  const compat = {
    supported_range: range ? `${range.oldest} … ${range.newest}` : null,
    verdict: rangeVerdict(s.version),
    ...(spec
      ? {
          spec: {
            pinned: spec.pin.version,
            same_as_pinned: spec.pinned,
            operations: spec.operations.size,
            missing: spec.missing.length,
            extra: spec.extra.length,
            changed: changed.length,
            ...(args.spec_ops ? { missing_ids: spec.missing, extra_ids: spec.extra, changed_ids: changed } : {}),
          },
        }
      : {}),
  };
  const files = await trailLines(ctx.config);
  const fleet = conductor.taskQueue() && (await (await conductor.taskQueue())!.status().catch((e: Error) => ({ error: e.message.slice(0, 200) })));
  const data = {
    ...(fleet ? { queue: fleet } : {}),
    url: s.url,
    version: s.version,
    engine: s.engine,
    healthy: s.healthy,
    ...(s.defaultModel ? { default_model: s.defaultModel } : {}),
    counts: s.counts,
    read_only: ctx.config.readOnly,
    toolsets: ctx.config.toolsets,
    compatibility: compat,
    ...(connection ? { connection: { mode: connection.mode, steps: connection.steps } } : {}),
    console: consoleCommandLine(),
    ...files.data,
  };
  const c = s.counts;
  const versus = spec
    ? spec.pinned
      ? `Its spec is the pinned one (${spec.pin.version}).`
      : `Its spec vs the pinned ${spec.pin.version}: ${spec.operations.size} operations, ${spec.missing.length} missing, ${spec.extra.length} extra, ${changed.length} changed${args.spec_ops ? "" : " (spec_ops: true lists them)"}; oc_api and oc_api_ops use the server's own.`
    : "Its spec (GET /doc) could not be read.";
  const specLine = v2 ? `It speaks the v2 API (opencode 2.x). ${versus}` : versus;
  const lists =
    args.spec_ops && spec
      ? `\nMissing: ${spec.missing.join(", ") || "none"}\nExtra: ${spec.extra.join(", ") || "none"}\nChanged: ${changed.join(", ") || "none"}`
      : "";
  const text = `opencode ${s.version} at ${s.url} (engine ${s.engine}): ${s.healthy ? "healthy" : "UNHEALTHY"}. Default model: ${s.defaultModel ?? "(none)"}. ${c.providers} providers, ${c.models} models, ${c.agents} agents, ${c.commands} commands.${ctx.config.readOnly ? " Read-only mode." : ""}\nCompatibility: ${compat.verdict}; supported range ${compat.supported_range ?? "unknown"} (docs/compatibility.md). ${specLine}${lists}${connection ? `\nConnection (${connection.mode}): ${connection.steps.map((x) => `${x.step}: ${x.result}`).join("; ")}` : ""}\nWeb console (tasks, approvals, timeline, audit): ${data.console}\n${files.text}`;
  return { text: fleet ? `${text}\n${queueLine(fleet)}` : text, data };
}
