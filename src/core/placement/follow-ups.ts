// wait, result and interrupt by id, wherever the work runs: a session id is followed on its
// server (with a queue, a session a worker ran is followed on that worker's opencode); any other
// id is the fleet's (a task, or a batch waited for and cancelled as one). Same decision as the
// starts (decide.ts), same result type (result.ts).
import { interrupt, result, wait, type SessionState } from "../control.js";
import { tally, type ParallelResult } from "../parallel.js";
import { batchTaskIds } from "../queue/names.js";
import type { Detail, TurnSummary } from "../turns/summary.js";
import type { WaitOptions } from "../turns/turn.js";
import { withWorktree } from "../worktrees/task.js";
import { place } from "./decide.js";
import type { PlacementHost, SessionHost } from "./host.js";
import { batchTurn, type PlacedBatch, type PlacedResult } from "./result.js";

export type FollowUpOptions = WaitOptions;

/** A turn (or with a queue, a task; or a whole batch, then `batch` holds its rows and `sessionId` is the batch id). */
export type FollowedResult = PlacedResult<TurnSummary> & { batch?: PlacedBatch };

function onFleet(host: PlacementHost, id: string): boolean {
  return place({ queued: host.queueSettings !== undefined, instances: host.instances !== undefined }, { kind: "id", id }) === "queue";
}

/** The server holding a session: a worker's opencode for a session it ran on the fleet, else this one. */
async function sessionHolder(host: PlacementHost, sessionId: string): Promise<SessionHost> {
  return (host.queueSettings !== undefined ? await host.fleetHolder?.(sessionId) : undefined) ?? host;
}

export async function waitAt(host: PlacementHost, id: string, o: FollowUpOptions = {}): Promise<FollowedResult> {
  if (!onFleet(host, id)) return withWorktree(host, await wait(await sessionHolder(host, id), id, o));
  const fleet = (await host.taskQueue())!;
  if ((await fleet.batchSize(id)) === undefined) return fleet.wait(id, o);
  // Each task's progress, named by its place in the batch.
  const onTaskProgress =
    o.onProgress && ((i: number, p: Parameters<NonNullable<WaitOptions["onProgress"]>>[0]) => o.onProgress!({ ...p, message: `task ${i + 1}: ${p.message}` }));
  return batchTurn(id, await fleet.waitBatch(id, { timeoutMs: o.timeoutMs, signal: o.signal, detail: o.detail, onTaskProgress }));
}

export async function resultAt(host: PlacementHost, id: string, o: { detail?: Detail } = {}): Promise<SessionState & { last: PlacedResult<TurnSummary> }> {
  if (!onFleet(host, id)) {
    const state = await result(await sessionHolder(host, id), id, o);
    return { ...state, last: await withWorktree(host, state.last) };
  }
  const last = await (await host.taskQueue())!.read(id);
  return { sessionId: last.sessionId, state: last.status === "running" ? "busy" : last.status === "unreachable" ? "unreachable" : "idle", last };
}

export async function interruptAt(host: PlacementHost, id: string, o: { detail?: Detail } = {}): Promise<FollowedResult & { wasRunning: boolean }> {
  if (!onFleet(host, id)) {
    const stopped = await interrupt(await sessionHolder(host, id), id, o);
    return { ...(await withWorktree(host, stopped)), wasRunning: stopped.wasRunning };
  }
  const fleet = (await host.taskQueue())!;
  const size = await fleet.batchSize(id);
  if (size === undefined) return fleet.cancel(id);
  // A batch: each of its tasks is taken off the queue or interrupted by its worker.
  const stopped = await Promise.all(batchTaskIds(id, size).map((taskId) => fleet.cancel(taskId)));
  const rows: ParallelResult[] = stopped.map(({ wasRunning: _, ...r }, index) => ({ ...r, index }));
  return { ...batchTurn(id, { ...tally(rows), batchId: id }), wasRunning: stopped.some((r) => r.wasRunning) };
}
