// What a finished job returns (the worker's answer), and how a caller reads any task's state as the
// same summary that in-process work returns, plus the task's own record (attempts, worker, patch).
import type { DelegateResult } from "../delegate.js";
import type { TurnSummary } from "../turns/summary.js";
import type { Attempt } from "./attempts.js";

export interface RepoOutcome {
  url: string;
  /** The commit the worktree started from. */
  base: string;
  /** `git diff` of the worktree against `base` (new files included). */
  patch: string;
  /** Paths changed, relative to the repository. */
  files: string[];
  /** `conductor/<task-id>`, when pushed. */
  branch?: string;
  pushed?: boolean;
  pushError?: string;
}

/** The job's return value. */
export interface TaskOutcome {
  taskId: string;
  summary: DelegateResult;
  attempts: Attempt[];
  worker: string;
  host: string;
  repo?: RepoOutcome;
  /** Epoch ms when the worker had the summary (the bench measures summary → caller from it). */
  summaryAt: number;
}

export type TaskState = "queued" | "running" | "finished" | "failed" | "cancelled";

export interface TaskView {
  id: string;
  state: TaskState;
  /** Every start on a worker; more than one means the earlier workers stopped answering (see each `reason`). */
  attempts: Attempt[];
  worker?: string;
  host?: string;
  repo?: RepoOutcome;
  /** Queue name (`tasks`, or `root-…` for a directory root). */
  queue: string;
  enqueuedAt?: number;
  startedAt?: number;
  finishedAt?: number;
}

export type QueuedSummary = DelegateResult & { task: TaskView };

/** A task not finished yet: `running`, with the current attempt's session when it has one. */
export function unfinished(view: TaskView, note: string): QueuedSummary {
  const current = view.attempts.at(-1);
  return {
    sessionId: current?.sessionId ?? "",
    status: "running",
    answer: "",
    error: { name: view.state === "queued" ? "Queued" : "Running", message: note },
    task: view,
  };
}

/** A task that ended without a result from a worker (failed job, stalled too often, cancelled while queued). */
export function ended(view: TaskView, status: TurnSummary["status"], name: string, message: string): QueuedSummary {
  const last = view.attempts.at(-1);
  return { sessionId: last?.sessionId ?? "", status, answer: "", error: { name, message: message.slice(0, 2000) }, task: view };
}

/** One line on the attempts, for the text answers (e.g. "2 attempts: 1 unreachable on w1 (ses_…), 2 finished on w2"). */
export function attemptsLine(attempts: Attempt[]): string {
  if (attempts.length === 0) return "not started on any worker yet";
  const parts = attempts.map((a) => `${a.n} ${a.outcome} on ${a.worker}${a.sessionId ? ` (${a.sessionId})` : ""}`);
  return `${attempts.length} attempt${attempts.length === 1 ? "" : "s"}: ${parts.join(", ")}`;
}

/** A summary that came from the queue (it carries the task's record). */
export function isQueued<T extends object>(r: T): r is T & { task: TaskView } {
  return "task" in r && typeof (r as { task?: unknown }).task === "object";
}
