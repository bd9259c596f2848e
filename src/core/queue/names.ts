// Names in Redis: BullMQ queues (one for tasks any worker may run, one per served directory root,
// one for workflow walks)
// and the fleet's own keys (attempts, outcomes, batches, cancellations, worker adverts, provider
// slots, the workers' opencode servers, approvals waiting in worker sessions, batch budgets).
import { createHash, randomUUID } from "node:crypto";
import { quoted, UsageError } from "../errors.js";

/** Tasks that need no particular machine: `repo` tasks and tasks without a directory. */
export const ANY_QUEUE = "tasks";

/**
 * Walk jobs: a workflow run walked by a worker (docs/workflows.md). A queue of their own, taken
 * by a BullMQ worker of their own with its own concurrency (`worker --walks N`), so a walk never
 * holds a task slot: a worker walking a run can never wait on a task only it could take.
 */
export const WALK_QUEUE = "walks";

/** The queue of tasks in one directory root (a hash: queue names must not hold `:` or `/`). */
export function rootQueue(root: string): string {
  return `root-${createHash("sha256").update(root).digest("hex").slice(0, 16)}`;
}

export const keys = (prefix: string) => ({
  attempts: (taskId: string) => `${prefix}:fleet:attempts:${taskId}`,
  batch: (batchId: string) => `${prefix}:fleet:batch:${batchId}`,
  /** Where a task lives (its queue), so that wait/result/cancel find it by id alone. */
  home: (taskId: string) => `${prefix}:fleet:home:${taskId}`,
  /** The final answer of a task that ended without a worker (cancelled while queued). */
  final: (taskId: string) => `${prefix}:fleet:final:${taskId}`,
  cancel: (taskId: string) => `${prefix}:fleet:cancel:${taskId}`,
  cancelChannel: `${prefix}:fleet:cancel`,
  workers: `${prefix}:fleet:workers`,
  worker: (id: string) => `${prefix}:fleet:worker:${id}`,
  limits: `${prefix}:fleet:limits`,
  slots: (provider: string) => `${prefix}:fleet:slots:${provider}`,
  roots: `${prefix}:fleet:roots`,
  /** A task's outcome, recorded by the worker as its attempt ends (outcome-record.ts), before BullMQ hears of it. */
  outcome: (taskId: string) => `${prefix}:fleet:outcome:${taskId}`,
  /** The opencode servers the workers run on: how to reach each (servers.ts), by the hash of its URL. */
  server: (id: string) => `${prefix}:fleet:server:${id}`,
  servers: `${prefix}:fleet:servers`,
  /** Which server holds a session a worker started. */
  session: (sessionId: string) => `${prefix}:fleet:session:${sessionId}`,
  /** Permission requests and questions waiting in worker sessions, by request id (approvals.ts). */
  pending: `${prefix}:fleet:pending`,
  /** What happens on the fleet that a waiting caller, a console or another worker acts on (fleet-events.ts). */
  events: `${prefix}:fleet:events`,
  /** A batch's shared spend (batch-budget.ts): per message, and the totals. */
  spend: (batchId: string) => `${prefix}:fleet:spend:${batchId}`,
  spendTotals: (batchId: string) => `${prefix}:fleet:spend-totals:${batchId}`,
});

export type FleetKeys = ReturnType<typeof keys>;

const PLAIN_ID = /^[A-Za-z0-9._-]{1,120}$/;

/**
 * A task id from the caller's `request_id` (the job id, so a repeated start is the same job on the
 * whole fleet), else a fresh one. BullMQ refuses `:` and number-like ids: other ids are hashed.
 */
export function taskIdFor(requestId: string | undefined): string {
  if (requestId === undefined) return `t-${randomUUID()}`;
  if (typeof requestId !== "string" || requestId.length === 0) throw new UsageError("`requestId` must be a non-empty string.");
  if (PLAIN_ID.test(requestId) && !/^\d+$/.test(requestId)) return requestId;
  return `r-${createHash("sha256").update(requestId).digest("hex").slice(0, 32)}`;
}

/** Task ids of a batch: `<batch>.1` … `<batch>.n`, in input order. */
export function batchTaskIds(batchId: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${batchId}.${i + 1}`);
}

/** Refuses ids that cannot name a task (used by wait/result/cancel before any Redis call). */
export function validTaskId(id: string): string {
  if (typeof id !== "string" || !PLAIN_ID.test(id))
    throw new UsageError(`${quoted(String(id).slice(0, 200))} is not a task id (letters, digits, . _ -; as returned by oc_delegate).`);
  return id;
}
