// A batch (oc_delegate_parallel) on the fleet: one job per task, ids derived from the batch id
// (names.ts) and the batch's size (and budget) recorded in Redis, so any process can wait for the
// whole batch by its id and results come back in input order. A budget over the whole batch is one
// shared spend in Redis that every worker of the batch adds to (batch-budget.ts). Split from client.ts.
import { quoted, UsageError } from "../errors.js";
import type { ParallelResult, ParallelSummary } from "../parallel.js";
import type { TurnProgress } from "../turns/turn-progress.js";
import type { BudgetTotals } from "../governance/budget.js";
import { readSpend } from "./batch-budget.js";
import type { QueueConnection } from "./redis-connection.js";
import { enqueue } from "./enqueue.js";
import { batchTaskIds, validTaskId, taskIdFor } from "./names.js";
import { toTaskSpec, type QueuedDelegateOptions } from "./spec.js";
import { waitTask, type JobEvents, type QueueWaitOptions } from "./wait.js";
import { taskSignal } from "../task-signal.js";

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
  return waitBatch(conn, events, await enqueueBatch(conn, tasks, o), o);
}

/** Puts a batch on the fleet (a repeat of the same id is the same batch); resolves with its id. */
export async function enqueueBatch(
  conn: QueueConnection,
  tasks: QueuedDelegateOptions[],
  o: Pick<QueueBatchOptions, "requestId" | "maxTokens" | "maxCostUsd"> = {},
): Promise<string> {
  if (!Array.isArray(tasks) || tasks.length === 0) throw new UsageError("`tasks` is empty: give at least one task.");
  if (tasks.length > MAX_BATCH) throw new UsageError(`A batch holds at most ${MAX_BATCH} tasks (got ${tasks.length}); split it.`);
  for (const [name, cap] of [
    ["maxTokens", o.maxTokens],
    ["maxCostUsd", o.maxCostUsd],
  ] as const)
    if (cap !== undefined && (typeof cap !== "number" || !Number.isFinite(cap) || cap <= 0))
      throw new UsageError(`\`${name}\` must be a positive number (got ${quoted(String(cap))}).`);
  const batchId = taskIdFor(o.requestId);
  const caps = o.maxTokens !== undefined || o.maxCostUsd !== undefined ? { maxTokens: o.maxTokens, maxCostUsd: o.maxCostUsd } : undefined;
  const specs = tasks.map((t) => ({ ...toTaskSpec(t), ...(caps ? { batchBudget: { batchId, ...caps } } : {}) }));
  await conn.reachable();
  const ids = batchTaskIds(batchId, tasks.length);
  const record: BatchRecord = { n: tasks.length, createdAt: Date.now(), ...(caps ? { budget: caps } : {}) };
  const known = await conn.redis.set(conn.keys.batch(batchId), JSON.stringify(record), "EX", conn.settings.ttlS, "NX");
  if (known === null) {
    const record = JSON.parse((await conn.redis.get(conn.keys.batch(batchId))) ?? "{}") as { n?: number };
    if (record.n !== tasks.length)
      throw new UsageError(`requestId ${quoted(o.requestId ?? batchId)} named a batch of ${record.n} tasks; this call has ${tasks.length}: give it a new id.`);
  }
  await enqueue(
    conn,
    ids.map((taskId, i) => ({ taskId, spec: specs[i]! })),
  );
  return batchId;
}

interface BatchRecord {
  n: number;
  createdAt: number;
  budget?: { maxTokens?: number; maxCostUsd?: number };
}

async function batchRecord(conn: QueueConnection, id: string): Promise<BatchRecord | undefined> {
  await conn.reachable();
  const raw = await conn.redis.get(conn.keys.batch(validTaskId(id)));
  return raw ? (JSON.parse(raw) as BatchRecord) : undefined;
}

/** Is this id a batch (oc_delegate_parallel's request id or batch id)? */
export async function batchSize(conn: QueueConnection, id: string): Promise<number | undefined> {
  return (await batchRecord(conn, id))?.n;
}

export async function waitBatch(
  conn: QueueConnection,
  events: JobEvents,
  batchId: string,
  o: Omit<QueueBatchOptions, "requestId"> = {},
): Promise<BatchSummary> {
  const record = await batchRecord(conn, batchId);
  if (record === undefined) throw new UsageError(`No batch ${quoted(batchId)} on the queue (unknown, or finished more than ${conn.settings.ttlS} s ago).`);
  const ids = batchTaskIds(batchId, record.n);
  const results = await Promise.all(
    ids.map(async (id, index): Promise<ParallelResult> => {
      try {
        const r = await waitTask(conn, events, id, {
          timeoutMs: o.timeoutMs,
          signal: taskSignal(o.signal),
          detail: o.detail,
          onBlocked: o.onBlocked,
          returnOnBlocked: o.returnOnBlocked,
          onProgress: o.onTaskProgress ? (p) => o.onTaskProgress!(index, p) : undefined,
        });
        return { ...r, index };
      } catch (error) {
        const e = error instanceof Error ? error : new Error(String(error));
        return { index, status: "error", answer: "", error: { name: e.name, message: e.message } };
      }
    }),
  );
  const counts = tallyCounts(results);
  // Still to wait for: running, or not known (a worker's opencode did not answer).
  const running = results.flatMap((r) => (r.status === "running" || r.status === "unreachable" ? [ids[r.index]!] : []));
  if (!record.budget) return { results, counts, running, batchId };
  // The batch's spend, as its workers added it up in Redis.
  const spent = await readSpend(conn.redis, conn.keys, batchId);
  const budget: BudgetTotals = { ...spent, ...record.budget };
  return { results, counts, running, batchId, budget };
}

function tallyCounts(results: ParallelResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}
