// Is anybody still walking a run? On the walker's own machine its pid is checked (the ledger's
// owner test); a walker on another machine (a run in the fleet's Redis) cannot be checked that way,
// so it writes a heartbeat into the run record while it walks, and one silent for four beats is
// taken for dead: `resume` from any process may then walk the run on.
import { hostname } from "node:os";
import { FailureStreak } from "../failure-streak.js";
import { ownerGone } from "../ledger/record.js";
import type { WorkflowRun } from "./run-record.js";
import type { RunRecords } from "./run-records.js";

/** How often a walker says it is alive in the run record (heartbeatAt). */
export const HEARTBEAT_MS = 15_000;
/** A walker on another machine that has not said so for this long is taken for dead. */
export const SILENT_WALKER_MS = 4 * HEARTBEAT_MS;

export function walkerGone(run: Pick<WorkflowRun, "owner" | "heartbeatAt" | "updatedAt">, now = Date.now()): boolean {
  if (run.owner.host === hostname()) return ownerGone(run.owner);
  return now - Date.parse(run.heartbeatAt ?? run.updatedAt) > SILENT_WALKER_MS;
}

export interface BeatOptions {
  /** Where a heartbeat that fails is said (once per streak, and when it works again). */
  log: (line: string, state: "failing" | "recovered") => void;
  /** How often (default HEARTBEAT_MS); a beat with no answer after this long counts as failed. */
  everyMs?: number;
}

/**
 * Runs `work` (a walk of the run) while this process says it is alive in the run record every
 * HEARTBEAT_MS, so a process on another machine, which cannot check this pid, can tell this walker
 * from a dead one. A beat that fails does not stop the walk (the walk's own writes fail on their
 * own if the store is gone for good); it is said once per streak, not once a beat.
 */
export async function beating<T>(store: RunRecords, id: string, work: () => Promise<T>, o: BeatOptions): Promise<T> {
  const alive = (r: WorkflowRun) => r.status === "running" && r.owner.pid === process.pid && r.owner.host === hostname();
  const everyMs = o.everyMs ?? HEARTBEAT_MS;
  const beats = new FailureStreak(`heartbeat of run ${id} (in ${store.where})`, o.log, { boundMs: everyMs, from: store.where });
  const beat = setInterval(
    () => void beats.run(() => store.update(id, (r) => (alive(r) ? { ...r, heartbeatAt: new Date().toISOString() } : undefined))),
    everyMs,
  );
  beat.unref();
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}
