// A task's state as the caller sees it, read from Redis without waiting: its home queue, its job
// (queued, running, completed or failed), its attempts, or the answer a cancel stored. Split from
// client.ts: read, wait (wait.ts) and cancel (cancel.ts) all start from here.
import { quoted, UsageError } from "../errors.js";
import { checkTaskId } from "./names.js";
import type { QueueConnection, TaskJob } from "./connection.js";
import { ended, unfinished, type QueuedSummary, type TaskOutcome, type TaskView } from "./outcome.js";

/** A finished job's answer as the caller sees it. */
export function fromOutcome(queueName: string, out: TaskOutcome, times: Pick<TaskView, "enqueuedAt" | "startedAt" | "finishedAt">): QueuedSummary {
  const state = out.summary.error?.name === "Cancelled" ? "cancelled" : "finished";
  const view: TaskView = {
    id: out.taskId,
    queue: queueName,
    ...times,
    state,
    attempts: out.attempts,
    worker: out.worker,
    host: out.host,
    ...(out.repo ? { repo: out.repo } : {}),
  };
  return { ...out.summary, task: view };
}

/** The queue a task was placed on (enqueue.ts claims it), or a clear error for an unknown id. */
export async function homeOf(conn: QueueConnection, taskId: string): Promise<string> {
  await conn.reachable();
  const home = await conn.redis.get(conn.keys.home(checkTaskId(taskId)));
  if (!home)
    throw new UsageError(
      `No task ${quoted(taskId)} on the queue (unknown, or finished more than ${conn.settings.ttlS} s ago; retention: OPENCODE_CONDUCTOR_QUEUE_TTL_S).`,
    );
  return home;
}

/** The task's state now, as a summary (no waiting). */
export async function readTask(conn: QueueConnection, taskId: string): Promise<QueuedSummary> {
  const queueName = await homeOf(conn, taskId);
  const final = await conn.redis.get(conn.keys.final(taskId));
  const job = (await conn.queue(queueName).getJob(taskId)) as TaskJob | undefined;
  const attempts = await conn.attempts.list(taskId);
  const base = { id: taskId, queue: queueName, attempts };
  if (final) return { ...(JSON.parse(final) as QueuedSummary), task: { ...base, state: "cancelled" } };
  if (!job)
    return ended(
      { ...base, state: "failed" },
      "lost",
      "TaskGone",
      "The task's job is gone from Redis (removed by hand, or its retention passed): its result cannot be read.",
    );
  const state = await job.getState();
  const times = { enqueuedAt: job.timestamp, startedAt: job.processedOn ?? undefined, finishedAt: job.finishedOn ?? undefined };
  if (state === "completed") return fromOutcome(queueName, job.returnvalue, times);
  if (state === "failed") {
    const view: TaskView = { ...base, ...times, state: "failed" };
    const reason = job.failedReason ?? "unknown";
    // BullMQ fails a job that stalled more often than allowed: every worker that took it was lost.
    if (/stalled/i.test(reason))
      return ended(
        view,
        "lost",
        "WorkersLost",
        `Every worker that took this task stopped answering (${reason}); its sessions (attempts) may hold partial work.`,
      );
    return ended(view, "error", "WorkerError", `The worker failed the task: ${reason}`);
  }
  const view: TaskView = { ...base, ...times, state: state === "active" ? "running" : "queued" };
  return unfinished(
    view,
    state === "active"
      ? `Running on ${attempts.at(-1)?.worker ?? "a worker"}: oc_wait ${taskId}.`
      : `Queued (${state}) until a worker is free: oc_wait ${taskId}.`,
  );
}
