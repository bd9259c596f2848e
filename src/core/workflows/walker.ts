// Is anybody still walking a run? On the walker's own machine its pid is checked (the ledger's
// owner test); a walker on another machine (a run in the fleet's Redis) cannot be checked that way,
// so it writes a heartbeat into the run record while it walks, and one silent for four beats is
// taken for dead: `resume` from any process may then walk the run on.
import { hostname } from "node:os";
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

/**
 * Runs `work` (a walk of the run) while this process says it is alive in the run record every
 * HEARTBEAT_MS, so a process on another machine, which cannot check this pid, can tell this walker
 * from a dead one.
 */
export async function beating<T>(store: RunRecords, id: string, work: () => Promise<T>): Promise<T> {
  const alive = (r: WorkflowRun) => r.status === "running" && r.owner.pid === process.pid && r.owner.host === hostname();
  const beat = setInterval(
    () => void store.update(id, (r) => (alive(r) ? { ...r, heartbeatAt: new Date().toISOString() } : undefined)).catch(() => undefined),
    HEARTBEAT_MS,
  );
  beat.unref();
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}
