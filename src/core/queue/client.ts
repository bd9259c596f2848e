// The caller's side of the queue: delegate/parallel/wait/result/interrupt as BullMQ jobs. A job
// carries the whole task (spec.ts) and its id is the task id (the caller's request_id when given),
// so a repeated start is the same job on the whole fleet and any process can wait for it by id,
// including one started after the first caller died. This class only ties the pieces together:
// connections (redis-connection.ts), placing jobs (enqueue.ts), reading a task (task-state.ts), waiting
// on the event stream (wait.ts), batches (batch.ts), cancel (cancel.ts), fleet status (status.ts).
import type { QueuedSummary } from "./outcome.js";
import { QueueConnection } from "./redis-connection.js";
import { enqueue } from "./enqueue.js";
import { taskIdFor } from "./names.js";
import { toTaskSpec, type QueuedDelegateOptions } from "./spec.js";
import { readTask } from "./task-state.js";
import { JobEvents, waitTask, type QueueWaitOptions } from "./wait.js";
import { batchSize, enqueueBatch, runBatch, waitBatch, type BatchSummary, type QueueBatchOptions } from "./batch.js";
import { cancelTask } from "./cancel.js";
import { listTasks, queueStatus, type QueuedTaskRow, type QueueStatus } from "./status.js";
import { RedisLedgerStore } from "./ledger-store.js";
import { fleetPending, fleetRequest, type FleetRequest } from "./approvals.js";
import { indexSession, knownServers, serverAccess, serverOfSession, type ServerAccess } from "./servers.js";

export class TaskQueue extends QueueConnection {
  private readonly events = new JobEvents(this);
  private ledger?: RedisLedgerStore;

  /** The delegation ledger's records in this fleet's Redis. */
  ledgerStore(): RedisLedgerStore {
    return (this.ledger ??= new RedisLedgerStore(this));
  }

  /** Queues one task (a repeat of the same id is the same job) and, unless `wait: false`, waits for it. */
  async delegate(o: QueuedDelegateOptions): Promise<QueuedSummary> {
    const spec = toTaskSpec(o);
    await this.reachable();
    const taskId = taskIdFor(o.requestId);
    await enqueue(this, [{ taskId, spec }]);
    if (o.wait === false) return this.read(taskId);
    return this.wait(taskId, o);
  }

  /** Runs a batch as one job per task; results come back in input order. */
  parallel(tasks: QueuedDelegateOptions[], o: QueueBatchOptions = {}): Promise<BatchSummary> {
    return runBatch(this, this.events, tasks, o);
  }

  /** Puts a batch on the fleet without waiting; resolves with its id (what waitBatch takes). */
  enqueueBatch(tasks: QueuedDelegateOptions[], o: Pick<QueueBatchOptions, "requestId" | "maxTokens" | "maxCostUsd"> = {}): Promise<string> {
    return enqueueBatch(this, tasks, o);
  }

  /** Is this id a batch (oc_delegate_parallel's request id or batch id)? */
  batchSize(id: string): Promise<number | undefined> {
    return batchSize(this, id);
  }

  waitBatch(batchId: string, o: Omit<QueueBatchOptions, "requestId"> = {}): Promise<BatchSummary> {
    return waitBatch(this, this.events, batchId, o);
  }

  /** The task's state now, as a summary (no waiting). */
  read(taskId: string): Promise<QueuedSummary> {
    return readTask(this, taskId);
  }

  /** Waits for the task to end (or the timeout/cancel: then `running`, and the task goes on). */
  wait(taskId: string, o: QueueWaitOptions = {}): Promise<QueuedSummary> {
    return waitTask(this, this.events, taskId, o);
  }

  /**
   * Cancels a task: a queued one is taken off the queue (it never starts); a running one is
   * interrupted by its worker (the turn ends `interrupted`, as opencode records it).
   */
  cancel(taskId: string): Promise<QueuedSummary & { wasRunning: boolean }> {
    return cancelTask(this, this.events, taskId);
  }

  /** Job counts per state over all the fleet's queues, the live workers and the provider limits. */
  status(): Promise<QueueStatus> {
    return queueStatus(this);
  }

  /** The newest tasks of every queue (for `queue ls`). */
  list(limit = 50): Promise<QueuedTaskRow[]> {
    return listTasks(this, limit);
  }

  /** Permission requests and questions waiting in worker sessions (of one task, when given). */
  async pending(taskId?: string): Promise<FleetRequest[]> {
    await this.reachable();
    return fleetPending(this.redis, this.keys, taskId);
  }

  /** One request waiting in a worker session, by its id. */
  async request(id: string): Promise<FleetRequest | undefined> {
    await this.reachable();
    return fleetRequest(this.redis, this.keys, id);
  }

  /** How to reach the opencode server a worker started this session on (password included: never show it). */
  async serverOf(sessionId: string): Promise<ServerAccess | undefined> {
    await this.reachable();
    return serverOfSession(this.redis, this.keys, sessionId);
  }

  /** Puts a session found on a server of the fleet (a fork of a worker's session) in the index. */
  async indexSession(sessionId: string, url: string): Promise<void> {
    await this.reachable();
    await indexSession(this.redis, this.keys, sessionId, url, this.settings.ttlS);
  }

  /** How to reach a server of the fleet by its URL (password included: never show it). */
  async server(url: string): Promise<ServerAccess | undefined> {
    await this.reachable();
    return serverAccess(this.redis, this.keys, url);
  }

  /** Every opencode server of the fleet on record (a session the index does not name, e.g. a fork, may be on one). */
  async servers(): Promise<ServerAccess[]> {
    await this.reachable();
    return knownServers(this.redis, this.keys);
  }

  /** Event streams first (they wait on their queues' connections), then the queues and the client. */
  override async close(): Promise<void> {
    this.ledger?.close();
    this.ledger = undefined;
    await this.events.close();
    await super.close();
  }
}
