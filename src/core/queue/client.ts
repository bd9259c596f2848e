// The caller's side of the queue: delegate/parallel/wait/result/interrupt as BullMQ jobs. A job
// carries the whole task (spec.ts) and its id is the task id (the caller's request_id when given),
// so a repeated start is the same job on the whole fleet and any process can wait for it by id,
// including one started after the first caller died. Turn ends come from BullMQ's event stream;
// a slow re-read of the job only covers events missed while Redis was away.
import { Queue, QueueEvents, type Job } from "bullmq";
import { Redis } from "ioredis";
import { quoted, UsageError } from "../errors.js";
import type { ParallelResult, ParallelSummary } from "../parallel.js";
import type { TurnProgress } from "../turns/watch.js";
import type { Detail } from "../turns/summary.js";
import { AttemptLog } from "./attempts.js";
import { ANY_QUEUE, batchTaskIds, checkTaskId, keys, rootQueue, taskIdFor, type FleetKeys } from "./names.js";
import { ended, unfinished, type QueuedSummary, type TaskOutcome, type TaskView } from "./outcome.js";
import { checkedSettings, redacted, type QueueSettings } from "./settings.js";
import { rootFor, toTaskSpec, type QueuedDelegateOptions, type TaskSpec } from "./spec.js";
import { readWorkers, type WorkerAdvert } from "./adverts.js";

/** Re-read a waited-for job this often even without an event (events are missed while Redis restarts). */
const RECHECK_MS = 10_000;
const CANCEL_WAIT_MS = 60_000;
const CONNECT_TIMEOUT_MS = 10_000;
export const MAX_BATCH = 1000;

export interface QueueWaitOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  detail?: Detail;
  onProgress?: (progress: TurnProgress) => void;
}

export interface QueueBatchOptions extends Omit<QueueWaitOptions, "onProgress"> {
  requestId?: string;
  maxTokens?: number;
  maxCostUsd?: number;
  /** Progress of each task, by its index in the batch. */
  onTaskProgress?: (index: number, progress: TurnProgress) => void;
}

export interface QueueCounts {
  waiting: number;
  active: number;
  completed: number;
  failed: number;
  delayed: number;
}

export interface QueueStatus {
  url: string;
  prefix: string;
  counts: QueueCounts;
  queues: Record<string, QueueCounts>;
  workers: WorkerAdvert[];
  limits: Record<string, number>;
}

type TaskJob = Job<TaskSpec, TaskOutcome>;

const isOutcome = (v: unknown): v is TaskOutcome => typeof v === "object" && v !== null && "summary" in v && "attempts" in v;

/** A finished job's answer as the caller sees it. */
function fromOutcome(queueName: string, out: TaskOutcome, times: Pick<TaskView, "enqueuedAt" | "startedAt" | "finishedAt">): QueuedSummary {
  const state = out.summary.error?.name === "Cancelled" ? "cancelled" : "finished";
  const view: TaskView = { id: out.taskId, queue: queueName, ...times, state, attempts: out.attempts, worker: out.worker, host: out.host, ...(out.repo ? { repo: out.repo } : {}) };
  return { ...out.summary, task: view };
}

export class TaskQueue {
  readonly settings: Required<QueueSettings>;
  readonly keys: FleetKeys;
  private redisClient?: Redis;
  private ready?: Promise<void>;
  private readonly queues = new Map<string, Queue<TaskSpec, TaskOutcome>>();
  private readonly events = new Map<string, Promise<QueueEvents>>();
  private readonly listeners = new Map<string, Set<(kind: "progress" | "end" | "active", data?: unknown) => void>>();

  constructor(settings: QueueSettings) {
    this.settings = checkedSettings(settings);
    this.keys = keys(this.settings.prefix);
  }

  /** The fleet's own keys (attempts, batches, adverts); BullMQ keeps its own connections. */
  get redis(): Redis {
    // maxRetriesPerRequest null: a command waits through a Redis restart instead of failing.
    if (!this.redisClient) {
      this.redisClient = new Redis(this.settings.url, { maxRetriesPerRequest: null, lazyConnect: false });
      this.redisClient.on("error", () => undefined); // reconnects by itself; see reachable()
    }
    return this.redisClient;
  }

  /**
   * The first use checks that Redis answers at all (a wrong URL must not hang a caller forever);
   * afterwards commands wait through a restart.
   */
  reachable(): Promise<void> {
    this.ready ??= new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.ready = undefined;
        reject(new UsageError(`The queue's Redis at ${redacted(this.settings.url)} did not answer within ${CONNECT_TIMEOUT_MS / 1000} s: is it running, and is OPENCODE_CONDUCTOR_QUEUE right?`));
      }, CONNECT_TIMEOUT_MS);
      this.redis.ping().then(
        () => (clearTimeout(timer), resolve()),
        (error: Error) => (clearTimeout(timer), (this.ready = undefined), reject(error)),
      );
    });
    return this.ready;
  }

  get attempts(): AttemptLog {
    return new AttemptLog(this.redis, this.keys, this.settings.ttlS);
  }

  queue(name: string): Queue<TaskSpec, TaskOutcome> {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue<TaskSpec, TaskOutcome>(name, { connection: { url: this.settings.url, maxRetriesPerRequest: null }, prefix: this.settings.prefix });
      q.on("error", () => undefined); // reconnects by itself; a call that cannot wait fails on its own
      this.queues.set(name, q);
    }
    return q;
  }

  /** Queues known to the fleet: the shared one and one per directory root a worker ever served. */
  async queueNames(): Promise<string[]> {
    const roots = await this.redis.smembers(`${this.settings.prefix}:fleet:roots`);
    return [ANY_QUEUE, ...roots.map(rootQueue)];
  }

  /** Where a task goes: the queue of the root holding its directory, else the shared queue. */
  private place(spec: TaskSpec, roots: string[]): string {
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

  private jobOptions(taskId: string) {
    const age = this.settings.ttlS;
    // attempts: 1: a task that ran and failed is an outcome, not something to run again; only a
    // lost worker (stalled job) hands the task on, up to the worker's maxStalledCount.
    return { jobId: taskId, attempts: 1, removeOnComplete: { age }, removeOnFail: { age } };
  }

  /** Queues one task (a repeat of the same id is the same job) and, unless `wait: false`, waits for it. */
  async delegate(o: QueuedDelegateOptions): Promise<QueuedSummary> {
    const spec = toTaskSpec(o);
    await this.reachable();
    const taskId = taskIdFor(o.requestId);
    await this.enqueue([{ taskId, spec }]);
    if (o.wait === false) return this.read(taskId);
    return this.wait(taskId, o);
  }

  private async enqueue(tasks: Array<{ taskId: string; spec: TaskSpec }>): Promise<void> {
    const roots = tasks.some((t) => t.spec.directory !== undefined) ? await this.redis.smembers(`${this.settings.prefix}:fleet:roots`) : [];
    const placed = tasks.map((t) => this.place(t.spec, roots));
    // One round trip: claim each task's home unless a first start already did (then that one stands).
    const m = this.redis.multi();
    tasks.forEach((t, i) => m.set(this.keys.home(t.taskId), placed[i]!, "EX", this.settings.ttlS, "NX").get(this.keys.home(t.taskId)));
    const replies = (await m.exec()) ?? [];
    const byQueue = new Map<string, Array<{ taskId: string; spec: TaskSpec }>>();
    tasks.forEach((t, i) => {
      const name = (replies[i * 2 + 1]?.[1] as string | null) ?? placed[i]!;
      byQueue.set(name, [...(byQueue.get(name) ?? []), t]);
    });
    for (const [name, list] of byQueue) {
      // A job id already present makes add a no-op: the first start stands (idempotent across the fleet).
      await this.queue(name).addBulk(list.map((t) => ({ name: "delegate", data: { ...t.spec, retentionS: this.settings.ttlS }, opts: this.jobOptions(t.taskId) })));
    }
  }

  /** Runs a batch as one job per task; results come back in input order. */
  async parallel(tasks: QueuedDelegateOptions[], o: QueueBatchOptions = {}): Promise<ParallelSummary & { batchId: string }> {
    if (!Array.isArray(tasks) || tasks.length === 0) throw new UsageError("`tasks` is empty: give at least one task.");
    if (tasks.length > MAX_BATCH) throw new UsageError(`A batch holds at most ${MAX_BATCH} tasks (got ${tasks.length}); split it.`);
    if (o.maxTokens !== undefined || o.maxCostUsd !== undefined) {
      throw new UsageError("A budget over a whole batch is not kept across the fleet: give each task its own max_tokens / max_cost_usd (oc_delegate), or unset OPENCODE_CONDUCTOR_QUEUE.");
    }
    const specs = tasks.map((t) => toTaskSpec(t));
    const batchId = taskIdFor(o.requestId);
    await this.reachable();
    const ids = batchTaskIds(batchId, tasks.length);
    const known = await this.redis.set(this.keys.batch(batchId), JSON.stringify({ n: tasks.length, createdAt: Date.now() }), "EX", this.settings.ttlS, "NX");
    if (known === null) {
      const record = JSON.parse((await this.redis.get(this.keys.batch(batchId))) ?? "{}") as { n?: number };
      if (record.n !== tasks.length) throw new UsageError(`request_id ${quoted(o.requestId ?? batchId)} named a batch of ${record.n} tasks; this call has ${tasks.length}: give it a new id.`);
    }
    await this.enqueue(ids.map((taskId, i) => ({ taskId, spec: specs[i]! })));
    return this.waitBatch(batchId, o);
  }

  /** Is this id a batch (oc_delegate_parallel's request id or batch id)? */
  async batchSize(id: string): Promise<number | undefined> {
    await this.reachable();
    const raw = await this.redis.get(this.keys.batch(checkTaskId(id)));
    return raw ? (JSON.parse(raw) as { n: number }).n : undefined;
  }

  async waitBatch(batchId: string, o: Omit<QueueBatchOptions, "requestId"> = {}): Promise<ParallelSummary & { batchId: string }> {
    const n = await this.batchSize(batchId);
    if (n === undefined) throw new UsageError(`No batch ${quoted(batchId)} on the queue (unknown, or finished more than ${this.settings.ttlS} s ago).`);
    const ids = batchTaskIds(batchId, n);
    const results = await Promise.all(
      ids.map(async (id, index): Promise<ParallelResult> => {
        try {
          const r = await this.wait(id, { timeoutMs: o.timeoutMs, signal: o.signal, detail: o.detail, onProgress: o.onTaskProgress ? (p) => o.onTaskProgress!(index, p) : undefined });
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

  private async homeOf(taskId: string): Promise<string> {
    await this.reachable();
    const home = await this.redis.get(this.keys.home(checkTaskId(taskId)));
    if (!home) throw new UsageError(`No task ${quoted(taskId)} on the queue (unknown, or finished more than ${this.settings.ttlS} s ago; retention: OPENCODE_CONDUCTOR_QUEUE_TTL_S).`);
    return home;
  }

  /** The task's state now, as a summary (no waiting). */
  async read(taskId: string): Promise<QueuedSummary> {
    const queueName = await this.homeOf(taskId);
    const final = await this.redis.get(this.keys.final(taskId));
    const job = (await this.queue(queueName).getJob(taskId)) as TaskJob | undefined;
    const attempts = await this.attempts.list(taskId);
    const base = { id: taskId, queue: queueName, attempts };
    if (final) return { ...(JSON.parse(final) as QueuedSummary), task: { ...base, state: "cancelled" } };
    if (!job) return ended({ ...base, state: "failed" }, "lost", "TaskGone", "The task's job is gone from Redis (removed by hand, or its retention passed): its result cannot be read.");
    const state = await job.getState();
    const times = { enqueuedAt: job.timestamp, startedAt: job.processedOn ?? undefined, finishedAt: job.finishedOn ?? undefined };
    if (state === "completed") return fromOutcome(queueName, job.returnvalue, times);
    if (state === "failed") {
      const view: TaskView = { ...base, ...times, state: "failed" };
      const reason = job.failedReason ?? "unknown";
      // BullMQ fails a job that stalled more often than allowed: every worker that took it was lost.
      if (/stalled/i.test(reason)) return ended(view, "lost", "WorkersLost", `Every worker that took this task stopped answering (${reason}); its sessions (attempts) may hold partial work.`);
      return ended(view, "error", "WorkerError", `The worker failed the task: ${reason}`);
    }
    const view: TaskView = { ...base, ...times, state: state === "active" ? "running" : "queued" };
    return unfinished(view, state === "active" ? `Running on ${attempts.at(-1)?.worker ?? "a worker"}: oc_wait ${taskId}.` : `Queued (${state}) until a worker is free: oc_wait ${taskId}.`);
  }

  private async eventsOf(queueName: string): Promise<QueueEvents> {
    let p = this.events.get(queueName);
    if (!p) {
      const ev = new QueueEvents(queueName, { connection: { url: this.settings.url, maxRetriesPerRequest: null }, prefix: this.settings.prefix });
      ev.on("error", () => undefined);
      const emit = (id: string, kind: "progress" | "end" | "active", data?: unknown) => this.listeners.get(id)?.forEach((f) => f(kind, data));
      ev.on("progress", ({ jobId, data }) => emit(jobId, "progress", data));
      ev.on("completed", ({ jobId, returnvalue }) => emit(jobId, "end", returnvalue));
      ev.on("failed", ({ jobId }) => emit(jobId, "end"));
      ev.on("active", ({ jobId }) => emit(jobId, "active"));
      p = ev.waitUntilReady().then(() => ev);
      this.events.set(queueName, p);
    }
    return p;
  }

  private listen(id: string, f: (kind: "progress" | "end" | "active", data?: unknown) => void): () => void {
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(f);
    return () => {
      set!.delete(f);
      if (set!.size === 0) this.listeners.delete(id);
    };
  }

  /** Waits for the task to end (or the timeout/cancel: then `running`, and the task goes on). */
  async wait(taskId: string, o: QueueWaitOptions = {}): Promise<QueuedSummary> {
    const queueName = await this.homeOf(taskId);
    await this.eventsOf(queueName);
    const deadline = o.timeoutMs === undefined ? Infinity : Date.now() + o.timeoutMs;
    let wake: () => void = () => undefined;
    let outcome: TaskOutcome | undefined;
    // Subscribed before the first read, so an end between the read and the wait is not missed.
    const off = this.listen(taskId, (kind, data) => {
      if (kind === "progress") {
        const p = data as TurnProgress | undefined;
        if (p && typeof p.message === "string") o.onProgress?.(p);
        return;
      }
      // The completed event carries the job's return value: no second read needed.
      if (kind === "end" && isOutcome(data)) outcome = data;
      wake();
    });
    try {
      for (;;) {
        if (outcome) return fromOutcome(queueName, outcome, {});
        const now = await this.read(taskId);
        if (now.status !== "running") return now;
        const left = deadline - Date.now();
        if (left <= 0 || o.signal?.aborted) return now;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, RECHECK_MS));
          const done = () => (clearTimeout(timer), o.signal?.removeEventListener("abort", done), resolve());
          wake = done;
          o.signal?.addEventListener("abort", done, { once: true });
        });
      }
    } finally {
      off();
    }
  }

  /**
   * Cancels a task: a queued one is taken off the queue (it never starts); a running one is
   * interrupted by its worker (the turn ends `interrupted`, as opencode records it).
   */
  async cancel(taskId: string): Promise<QueuedSummary & { wasRunning: boolean }> {
    const queueName = await this.homeOf(taskId);
    await this.redis.set(this.keys.cancel(taskId), "1", "EX", this.settings.ttlS);
    const job = (await this.queue(queueName).getJob(taskId)) as TaskJob | undefined;
    const state = job ? await job.getState() : "unknown";
    if (job && (state === "waiting" || state === "delayed" || state === "prioritized")) {
      const removed = await job.remove().then(
        () => true,
        () => false, // a worker took it a moment ago: it sees the cancel flag and stops
      );
      if (removed) {
        const view: TaskView = { id: taskId, queue: queueName, state: "cancelled", attempts: await this.attempts.list(taskId) };
        const summary = ended(view, "error", "Cancelled", "Cancelled while queued: no worker started it.");
        const { task: _, ...stored } = summary;
        await this.redis.set(this.keys.final(taskId), JSON.stringify(stored), "EX", this.settings.ttlS);
        return { ...summary, wasRunning: false };
      }
    }
    if (state === "completed" || state === "failed") return { ...(await this.read(taskId)), wasRunning: false };
    await this.redis.publish(this.keys.cancelChannel, taskId);
    const after = await this.wait(taskId, { timeoutMs: CANCEL_WAIT_MS });
    return { ...after, wasRunning: true };
  }

  /** Job counts per state over all the fleet's queues, the live workers and the provider limits. */
  async status(): Promise<QueueStatus> {
    await this.reachable();
    const names = await this.queueNames();
    const queues: Record<string, QueueCounts> = {};
    const counts: QueueCounts = { waiting: 0, active: 0, completed: 0, failed: 0, delayed: 0 };
    for (const name of names) {
      const c = await this.queue(name).getJobCounts("waiting", "active", "completed", "failed", "delayed", "prioritized");
      const row = { waiting: (c.waiting ?? 0) + (c.prioritized ?? 0), active: c.active ?? 0, completed: c.completed ?? 0, failed: c.failed ?? 0, delayed: c.delayed ?? 0 };
      queues[name] = row;
      for (const k of Object.keys(counts) as Array<keyof QueueCounts>) counts[k] += row[k];
    }
    const limits = Object.fromEntries(Object.entries(await this.redis.hgetall(this.keys.limits)).map(([k, v]) => [k, Number(v)]));
    return { url: redacted(this.settings.url), prefix: this.settings.prefix, counts, queues, workers: await readWorkers(this.redis, this.keys), limits };
  }

  /** The newest tasks of every queue (for `queue ls`). */
  async list(limit = 50): Promise<Array<{ id: string; queue: string; state: string; title: string; enqueuedAt: number }>> {
    const rows: Array<{ id: string; queue: string; state: string; title: string; enqueuedAt: number }> = [];
    for (const name of await this.queueNames()) {
      const jobs = (await this.queue(name).getJobs(["active", "waiting", "prioritized", "delayed", "completed", "failed"], 0, limit - 1, false)) as TaskJob[];
      for (const job of jobs) {
        if (!job?.id) continue;
        const state = await job.getState();
        rows.push({ id: job.id, queue: name, state, title: job.data.title ?? job.data.task.split("\n")[0]!.slice(0, 60), enqueuedAt: job.timestamp });
      }
    }
    return rows.sort((a, b) => b.enqueuedAt - a.enqueuedAt).slice(0, limit);
  }

  async close(): Promise<void> {
    const events = [...this.events.values()];
    this.events.clear();
    await Promise.all(events.map((p) => p.then((e) => e.close()).catch(() => undefined)));
    await Promise.all([...this.queues.values()].map((q) => q.close().catch(() => undefined)));
    this.queues.clear();
    this.redisClient?.disconnect();
    this.redisClient = undefined;
  }
}

