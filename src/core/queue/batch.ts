// A batch (oc_delegate_parallel) on the fleet: one job per task, ids derived from the batch id
// (names.ts) and the batch's size recorded in Redis, so any process can wait for the whole batch
// by its id and results come back in input order. Split from client.ts.
import { quoted, UsageError } from "../errors.js";
import type { ParallelResult, ParallelSummary } from "../parallel.js";
import type { TurnProgress } from "../turns/turn-progress.js";
import type { QueueConnection } from "./connection.js";
import { enqueue } from "./enqueue.js";
import { batchTaskIds, checkTaskId, taskIdFor } from "./names.js";
import { toTaskSpec, type QueuedDelegateOptions } from "./spec.js";
import { waitTask, type JobEvents, type QueueWaitOptions } from "./wait.js";

export const MAX_BATCH = 1000;

export interface QueueBatchOptions extends Omit<QueueWaitOptions, "onProgress"> {
  requestId?: string;
  maxTokens?: number;
  maxCostUsd?: number;
  /** Progress of each task, by its index in the batch. */
  onTaskProgress?: (index: number, progress: TurnProgress) => void;
}

export type BatchSummary = ParallelSummary & { batchId: string };

/** Runs a batch as one job per task; results come back in input order. */
export async function runBatch(conn: QueueConnection, events: JobEvents, tasks: QueuedDelegateOptions[], o: QueueBatchOptions = {}): Promise<BatchSummary> {
  if (!Array.isArray(tasks) || tasks.length === 0) throw new UsageError("`tasks` is empty: give at least one task.");
  if (tasks.length > MAX_BATCH) throw new UsageError(`A batch holds at most ${MAX_BATCH} tasks (got ${tasks.length}); split it.`);
  if (o.maxTokens !== undefined || o.maxCostUsd !== undefined) {
    throw new UsageError(
      "A budget over a whole batch is not kept across the fleet: give each task its own max_tokens / max_cost_usd (oc_delegate), or unset OPENCODE_CONDUCTOR_QUEUE.",
    );
  }
  const specs = tasks.map((t) => toTaskSpec(t));
  const batchId = taskIdFor(o.requestId);
  await conn.reachable();
  const ids = batchTaskIds(batchId, tasks.length);
  const known = await conn.redis.set(conn.keys.batch(batchId), JSON.stringify({ n: tasks.length, createdAt: Date.now() }), "EX", conn.settings.ttlS, "NX");
  if (known === null) {
    const record = JSON.parse((await conn.redis.get(conn.keys.batch(batchId))) ?? "{}") as { n?: number };
    if (record.n !== tasks.length)
      throw new UsageError(`requestId ${quoted(o.requestId ?? batchId)} named a batch of ${record.n} tasks; this call has ${tasks.length}: give it a new id.`);
  }
  await enqueue(
    conn,
    ids.map((taskId, i) => ({ taskId, spec: specs[i]! })),
  );
  return waitBatch(conn, events, batchId, o);
}

/** Is this id a batch (oc_delegate_parallel's request id or batch id)? */
export async function batchSize(conn: QueueConnection, id: string): Promise<number | undefined> {
  await conn.reachable();
  const raw = await conn.redis.get(conn.keys.batch(checkTaskId(id)));
  return raw ? (JSON.parse(raw) as { n: number }).n : undefined;
}

export async function waitBatch(
  conn: QueueConnection,
  events: JobEvents,
  batchId: string,
  o: Omit<QueueBatchOptions, "requestId"> = {},
): Promise<BatchSummary> {
  const n = await batchSize(conn, batchId);
  if (n === undefined) throw new UsageError(`No batch ${quoted(batchId)} on the queue (unknown, or finished more than ${conn.settings.ttlS} s ago).`);
  const ids = batchTaskIds(batchId, n);
  const results = await Promise.all(
    ids.map(async (id, index): Promise<ParallelResult> => {
      try {
        const r = await waitTask(conn, events, id, {
          timeoutMs: o.timeoutMs,
          signal: o.signal,
          detail: o.detail,
          onProgress: o.onTaskProgress ? (p) => o.onTaskProgress!(index, p) : undefined,
        });
        return { ...r, index };
      } catch (error) {
        const e = error instanceof Error ? error : new Error(String(error));
        return { index, status: "error", answer: "", error: { name: e.name, message: e.message } };
      }
    }),
  );
  const counts: Record<string, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  const running = results.flatMap((r) => (r.status === "running" ? [ids[r.index]!] : []));
  return { results, counts, running, batchId };
}
