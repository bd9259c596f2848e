// A worker's side of a walk job (walk-queue.ts): walks the run from its record in the fleet's Redis
// until it ends or stops (a sign-off, a permission), saying it is alive in the record as any walker
// does. The walk is the one every walker does (walk.ts): a run a dead worker was walking resumes at
// its unfinished step with the same attempt and request id, so the delegation ledger in Redis
// answers the task that attempt had queued (still queued, running, or done) and the model is not
// asked again. A job for a run that ended meanwhile (cancelled while its job waited), or that a
// newer walk job superseded, ends without walking.
import type { AuditLog } from "../governance/audit.js";
import type { PlacementHost } from "../placement/host.js";
import type { Worktrees } from "../worktrees/worktrees.js";
import { RedisRunStore } from "./redis-run-store.js";
import { walk } from "./walk.js";
import { walkJobId, type WalkJobData, type WalkJobResult } from "./walk-queue.js";
import { beating } from "./walker.js";

export async function runWalkJob(
  host: PlacementHost & { readonly worktrees?: Worktrees },
  data: WalkJobData,
  jobId: string,
  audit: AuditLog | undefined,
  /** The worker's log: where a failing heartbeat of the run is said. */
  log: (line: string) => void,
): Promise<WalkJobResult> {
  const queue = host.taskQueue();
  if (!queue) throw new Error("A walk job needs a conductor with the fleet's queue.");
  const store = new RedisRunStore(await queue);
  const run = await store.get(data.runId);
  if (!run) return { runId: data.runId, status: "missing" };
  if (run.end) return { runId: run.id, status: run.status };
  if (walkJobId(run) !== jobId) return { runId: run.id, status: run.status, superseded: true };
  // Never aborted: walk() takes an aborted signal for a cancel, and a cancel reaches this walk
  // through the record (cancelRequestedAt) and the interrupted turns of its step instead.
  const signal = new AbortController().signal;
  const walked = await beating(store, run.id, () => walk({ host, store, audit, signal }, run.id), { log });
  return { runId: walked.id, status: walked.status };
}
