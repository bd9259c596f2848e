// The one result type of work wherever it ran: the turn's summary (or a batch's), plus what the
// placement adds: the fleet's record of a queued task, the private instance, a replayed start.
// delegate, parallel, wait, result and interrupt all answer it.
import type { DelegateResult } from "../delegate.js";
import type { ParallelSummary } from "../parallel.js";
import type { TaskView } from "../queue/outcome.js";
import type { TurnStatus, TurnSummary } from "../turns/summary.js";
import type { WorktreeReport } from "../worktrees/task.js";

export interface PlacedFacts {
  /** Run on the fleet: the queue's record (worker, attempts, patch); `sessionId` is the worker's session. */
  task?: TaskView;
  /** Run on a private instance of the task's directory, or of a worktree of its own. */
  isolation?: "instance" | "worktree";
  /** A worktree task: its branch, base and head, files and patch (or where it runs, until it ends). */
  worktree?: WorktreeReport;
  /** A command to watch the session live (no password in it). */
  attach?: string;
  /** A repeated requestId: the first start's sessions, nothing new was started. */
  replayed?: true;
}

export type PlacedResult<T extends TurnSummary = DelegateResult> = T & PlacedFacts;

export type PlacedBatch = ParallelSummary & {
  /** The fleet's batch id (with a queue): wait takes it to wait for the whole batch. */
  batchId?: string;
  replayed?: true;
};

/** A fleet batch waited for as one turn, whose `sessionId` is the batch id. */
export type BatchTurn = TurnSummary & { batch: PlacedBatch };

/** Running while any task runs, unreachable while any outcome is unknown, done when all are, else error (the rows say which). */
export function batchStatus(batch: ParallelSummary): TurnStatus {
  const statuses = batch.results.map((r) => r.status);
  if (statuses.includes("running")) return "running";
  if (statuses.includes("unreachable")) return "unreachable";
  return statuses.every((s) => s === "done") ? "done" : "error";
}

export function batchTurn(batchId: string, batch: PlacedBatch): BatchTurn {
  return { sessionId: batchId, status: batchStatus(batch), answer: "", batch };
}
