// Walk jobs: a detached run (started with `detach` on a queue) is walked by whichever worker takes
// its walk job, not by the process that started it. A run has one walk job at a time and each new
// walk (the start, an answered sign-off, a resume, a retry) is a new job, `RUN.walk-N`: BullMQ keeps
// a finished job's id for the retention, so re-using one id would make the next add a no-op. Only
// the newest job may walk the run (walkJobId); an older one a worker takes late finds itself
// superseded and ends without walking. A worker that dies mid-walk has its job handed to another
// by BullMQ's stalled-job check: the same job, so the next worker walks the run on from its record.
import type { Queue } from "bullmq";
import { WALK_QUEUE } from "../queue/names.js";
import type { QueueConnection } from "../queue/redis-connection.js";
import type { WorkflowRun } from "./run-record.js";
import type { RunRecords } from "./run-records.js";

export interface WalkJobData {
  runId: string;
}

/** What a worker's walk job answers BullMQ with: the run's status when the walk stopped (or why it did not walk). */
export interface WalkJobResult {
  runId: string;
  status: string;
  superseded?: boolean;
}

/** Job states in which a walk job will still walk (or walks now). */
const LIVE = new Set(["waiting", "active", "delayed", "prioritized", "waiting-children"]);

export function walkQueue(conn: QueueConnection): Queue<WalkJobData, WalkJobResult> {
  return conn.queue(WALK_QUEUE) as unknown as Queue<WalkJobData, WalkJobResult>;
}

/** The id of the run's newest walk job (the only one that may walk it). */
export function walkJobId(run: Pick<WorkflowRun, "id" | "detached">): string | undefined {
  return run.detached && run.detached.walks > 0 ? `${run.id}.walk-${run.detached.walks}` : undefined;
}

/** Queues the run's next walk (a new job, which supersedes any older one); resolves with the record that names it. */
export async function queueWalk(conn: QueueConnection, store: RunRecords, runId: string): Promise<WorkflowRun> {
  const run = await store.update(runId, (r) => (r.detached ? { ...r, detached: { walks: r.detached.walks + 1 } } : undefined));
  const jobId = run && walkJobId(run);
  if (!jobId) throw new Error(`Run ${runId} is not walked on the queue.`);
  const age = conn.settings.ttlS;
  // attempts: 1: a walk that threw is not walked again by itself (resume queues another); only a
  // worker that stopped answering (a stalled job) hands the walk on.
  await walkQueue(conn).add("walk", { runId }, { jobId, attempts: 1, removeOnComplete: { age }, removeOnFail: { age } });
  return run;
}

/** Whether the run's newest walk job waits for a worker, is walked now, or is over (or was never queued). */
export async function walkState(conn: QueueConnection, run: WorkflowRun): Promise<"queued" | "walking" | "none"> {
  const jobId = walkJobId(run);
  if (!jobId) return "none";
  const state = await walkQueue(conn).getJobState(jobId);
  if (state === "active") return "walking";
  return LIVE.has(state) ? "queued" : "none";
}

/** Takes the run's walk job off the queue if no worker has taken it; "walking" when one has. */
export async function dropQueuedWalk(conn: QueueConnection, run: WorkflowRun): Promise<"walking" | "none"> {
  const state = await walkState(conn, run);
  if (state !== "queued") return state;
  // 0: a worker took it meanwhile (a locked job is not removed): that walker ends the run.
  const removed = await walkQueue(conn).remove(walkJobId(run)!);
  return removed === 1 ? "none" : "walking";
}
