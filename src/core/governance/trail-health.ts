// Whether the audit trail and the task records can be written, in the words every place that tells
// it uses (stderr, oc_status, each tool answer, the web console).
import type { Config } from "../../config.js";
import { sharedWriter, type FileHealth, type HealthChange, type JsonlWriter } from "./jsonl-writer.js";
import { taskRecordsPath } from "./task-records.js";

export type TrailName = "audit trail" | "task records";

export interface Trail {
  name: TrailName;
  writer: JsonlWriter;
}

/** The process's writers of the audit trail (unless auditing is off) and of the task records. */
export function trailsOf(config: Pick<Config, "auditPath" | "stateDir" | "rotation">): Trail[] {
  return [
    ...(config.auditPath ? [{ name: "audit trail" as const, writer: sharedWriter(config.auditPath, config.rotation) }] : []),
    { name: "task records", writer: sharedWriter(taskRecordsPath(config.stateDir), config.rotation) },
  ];
}

/** Each trail's health, tried now (held lines written, or the file checked). */
export async function checkTrails(trails: Trail[]): Promise<Array<FileHealth & { name: TrailName }>> {
  return Promise.all(trails.map(async (t) => ({ name: t.name, ...(await t.writer.check()) })));
}

/** "the audit trail /x cannot be written (since T): EACCES …; 3 lines wait in memory" */
export function unwritableText(name: TrailName, h: FileHealth): string {
  const waiting =
    h.held > 0 ? `; ${h.held === 1 ? "1 line waits in memory and is" : `${h.held} lines wait in memory and are`} written as soon as it can be` : "";
  const dropped = h.dropped > 0 ? ` (${h.dropped} more were dropped: too many waited)` : "";
  return `the ${name} ${h.path} cannot be written (since ${h.since}): ${h.error}${waiting}${dropped}`;
}

/** What a health change says on stderr. */
export function healthChangeText(name: TrailName, change: HealthChange): string {
  if (change.kind === "failed")
    return `${unwritableText(name, change.health)}. Fix the file or its folder (permissions, free space); this is tried again every few seconds.`;
  const o = change.outage;
  return `the ${name} ${change.health.path} can be written again (unwritable from ${o.since} to ${o.until}: ${o.error}); ${change.written} held line${change.written === 1 ? "" : "s"} written${o.dropped > 0 ? `, ${o.dropped} dropped` : ""}.`;
}

const reported = new WeakSet<JsonlWriter>();

/** Says on stderr when a trail cannot be written (at once if it cannot now) and when it can again; once per file in this process. */
export function reportOnStderr(trails: Trail[]): void {
  for (const { name, writer } of trails) {
    if (reported.has(writer)) continue;
    reported.add(writer);
    const say = (change: HealthChange) => process.stderr.write(`opencode-conductor: ${healthChangeText(name, change)}\n`);
    writer.onHealth(say);
    const health = writer.health();
    if (!health.writable) say({ kind: "failed", health });
  }
}
