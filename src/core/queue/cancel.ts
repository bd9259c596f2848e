// Cancelling a task on the fleet: a queued one is taken off its queue (it never starts, and the
// cancelled answer is stored for later reads); a running one is flagged and its worker told over
// pub/sub, and the caller waits for the turn to end as opencode records it. Split from client.ts.
import type { QueueConnection, TaskJob } from "./redis-connection.js";
import { ended, type QueuedSummary, type TaskView } from "./outcome.js";
import { homeOf, readTask } from "./task-state.js";
import { waitTask, type JobEvents } from "./wait.js";

const CANCEL_WAIT_MS = 60_000;

/**
 * Cancels a task: a queued one is taken off the queue (it never starts); a running one is
 * interrupted by its worker (the turn ends `interrupted`, as opencode records it).
 */
export async function cancelTask(conn: QueueConnection, events: JobEvents, taskId: string): Promise<QueuedSummary & { wasRunning: boolean }> {
  const queueName = await homeOf(conn, taskId);
  await conn.redis.set(conn.keys.cancel(taskId), "1", "EX", conn.settings.ttlS);
  const job = (await conn.queue(queueName).getJob(taskId)) as TaskJob | undefined;
  const state = job ? await job.getState() : "unknown";
  if (job && (state === "waiting" || state === "delayed" || state === "prioritized")) {
    const removed = await job.remove().then(
      () => true,
      () => false, // a worker took it a moment ago: it sees the cancel flag and stops
    );
    if (removed) {
      const view: TaskView = { id: taskId, queue: queueName, state: "cancelled", attempts: await conn.attempts.list(taskId) };
      const summary = ended(view, "error", "Cancelled", "Cancelled while queued: no worker started it.");
      const { task: _, ...stored } = summary;
      await conn.redis.set(conn.keys.final(taskId), JSON.stringify(stored), "EX", conn.settings.ttlS);
      return { ...summary, wasRunning: false };
    }
  }
  if (state === "completed" || state === "failed") return { ...(await readTask(conn, taskId)), wasRunning: false };
  await conn.redis.publish(conn.keys.cancelChannel, taskId);
  const after = await waitTask(conn, events, taskId, { timeoutMs: CANCEL_WAIT_MS, returnOnBlocked: false });
  return { ...after, wasRunning: true };
}
