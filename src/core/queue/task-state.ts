// A task's state as the caller sees it, read from Redis without waiting: its home queue, its job
// (queued, running, completed or failed), its attempts, or the answer a cancel stored. Split from
// client.ts: read, wait (wait.ts) and cancel (cancel.ts) all start from here.
import { quoted, UsageError } from "../errors.js";
import { validTaskId } from "./names.js";
import type { QueueConnection, TaskJob } from "./redis-connection.js";
import { fleetPending } from "./approvals.js";
import { readOutcome } from "./outcome-record.js";
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
  const home = await conn.redis.get(conn.keys.home(validTaskId(taskId)));
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
  // An attempt's outcome is on record before BullMQ completes the job (and stays when BullMQ refused it).
  const recorded = await readOutcome(conn.redis, conn.keys, taskId);
  const times = job ? { enqueuedAt: job.timestamp, startedAt: job.processedOn ?? undefined, finishedAt: job.finishedOn ?? undefined } : {};
  if (recorded) return fromOutcome(queueName, recorded, times);
  if (!job)
    return ended(
      { ...base, state: "failed" },
      "unreachable",
      "TaskGone",
      "The task's job is gone from Redis (removed by hand, or its retention passed): its result cannot be read here, so its outcome is unknown. Its sessions (attempts), if listed, are on the workers' opencode: read them there before running the task again.",
    );
  const state = await job.getState();
  if (state === "completed") {
    // The job was read before BullMQ completed it (getState is a later read): read it again for its result.
    const out = job.returnvalue ?? ((await conn.queue(queueName).getJob(taskId)) as TaskJob | undefined)?.returnvalue;
    if (out) return fromOutcome(queueName, out, times);
    return ended(
      { ...base, ...times, state: "failed" },
      "unreachable",
      "OutcomeUnreadable",
      "BullMQ completed the task's job without a result to read, and no attempt's outcome is on record: its outcome is unknown. Read its sessions (attempts) on the workers' opencode before running the task again.",
    );
  }
  if (state === "failed") {
    const view: TaskView = { ...base, ...times, state: "failed" };
    const reason = job.failedReason ?? "unknown";
    // BullMQ fails a job that stalled more often than allowed: every worker that took it stopped
    // answering, so nobody reported how its session ended (it may have finished on its opencode).
    if (/stalled/i.test(reason))
      return ended(
        view,
        "unreachable",
        "WorkersUnreachable",
        `Every worker that took this task stopped answering (${reason}): its outcome is unknown. Its sessions (attempts) may have finished or hold partial work: read them on the workers' opencode before running the task again.`,
      );
    return ended(view, "error", "WorkerError", `The worker failed the task: ${reason}`);
  }
  const view: TaskView = { ...base, ...times, state: state === "active" ? "running" : "queued" };
  // A permission or question waits in the worker's session: blocked, as in process (answer it with oc_answer).
  const pending = state === "active" ? (await fleetPending(conn.redis, conn.keys, taskId)).map((r) => r.request) : [];
  if (pending.length)
    return {
      ...unfinished(view, `Waiting for an answer in its session on ${attempts.at(-1)?.worker ?? "a worker"}: oc_answer, then oc_wait ${taskId}.`),
      status: "blocked",
      pending,
    };
  return unfinished(
    view,
    state === "active"
      ? `Running on ${attempts.at(-1)?.worker ?? "a worker"}: oc_wait ${taskId}.`
      : `Queued (${state}) until a worker is free: oc_wait ${taskId}.`,
  );
}
