// Putting tasks on the fleet: each task goes to the queue of the root that holds its directory
// (else the shared queue), its home is claimed once in Redis so every later start of the same id
// finds the same queue, and its job id is the task id so a repeated start is a no-op. Split from
// client.ts: delegate and parallel (batch.ts) both enqueue this way.
import { quoted, UsageError } from "../errors.js";
import type { QueueConnection } from "./redis-connection.js";
import { ANY_QUEUE, rootQueue } from "./names.js";
import { rootFor, type TaskSpec } from "./spec.js";

export interface TaskToQueue {
  taskId: string;
  spec: TaskSpec;
}

/** Where a task goes: the queue of the root holding its directory, else the shared queue. */
function place(spec: TaskSpec, roots: string[]): string {
  if (spec.directory === undefined) return ANY_QUEUE;
  const root = rootFor(spec.directory, roots);
  if (!root) {
    const served = roots.length ? roots.map((r) => quoted(r)).join(", ") : "none";
    throw new UsageError(
      `No worker serves the directory ${quoted(spec.directory)} (roots served: ${served}). Start a worker on a machine that has it (opencode-conductor worker --root DIR), or give a \`repo\` instead.`,
    );
  }
  spec.root = root;
  return rootQueue(root);
}

function jobOptions(conn: QueueConnection, taskId: string) {
  const age = conn.settings.ttlS;
  // attempts: 1: a task that ran and failed is an outcome, not something to run again; only a
  // worker that stopped answering (stalled job) hands the task on, up to the worker's maxStalledCount.
  return { jobId: taskId, attempts: 1, removeOnComplete: { age }, removeOnFail: { age } };
}

export async function enqueue(conn: QueueConnection, tasks: TaskToQueue[]): Promise<void> {
  const roots = tasks.some((t) => t.spec.directory !== undefined) ? await conn.redis.smembers(conn.keys.roots) : [];
  const placed = tasks.map((t) => place(t.spec, roots));
  // One round trip: claim each task's home unless a first start already did (then that one stands).
  const m = conn.redis.multi();
  tasks.forEach((t, i) => m.set(conn.keys.home(t.taskId), placed[i]!, "EX", conn.settings.ttlS, "NX").get(conn.keys.home(t.taskId)));
  const replies = (await m.exec()) ?? [];
  const byQueue = new Map<string, TaskToQueue[]>();
  tasks.forEach((t, i) => {
    const name = (replies[i * 2 + 1]?.[1] as string | null) ?? placed[i]!;
    byQueue.set(name, [...(byQueue.get(name) ?? []), t]);
  });
  for (const [name, list] of byQueue) {
    // A job id already present makes add a no-op: the first start stands (idempotent across the fleet).
    await conn
      .queue(name)
      .addBulk(list.map((t) => ({ name: "delegate", data: { ...t.spec, retentionS: conn.settings.ttlS }, opts: jobOptions(conn, t.taskId) })));
  }
}
