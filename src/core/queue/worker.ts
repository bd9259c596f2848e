// A worker of the fleet: takes tasks from the shared queue and from the queues of the roots it
// serves, and runs each with the same core as in-process work (Conductor.delegate: the turn
// machine, fallback watchdog, checks, budgets, guard rails) against its own opencode. BullMQ holds
// a lock on each running job; a worker that dies stops renewing it and BullMQ's stalled-job check
// hands the job to another worker, which records the first attempt as lost (attempts.ts).
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { DelayedError, Worker, type Job } from "bullmq";
import { Redis } from "ioredis";
import type { Conductor } from "../conductor.js";
import type { DelegateResult } from "../delegate.js";
import { guardedEnv, guardRules } from "../policy/guard-rails.js";
import { permissionRules } from "../policy/permissions.js";
import { writeAdvert, removeAdvert, HEARTBEAT_MS, type WorkerAdvert } from "./adverts.js";
import { AttemptLog, type Attempt } from "./attempts.js";
import { beginAttempt } from "./begin.js";
import { ANY_QUEUE, keys, rootQueue, type FleetKeys } from "./names.js";
import type { TaskOutcome } from "./outcome.js";
import { checkoutRepo, collectRepo, removeCheckout, type Checkout } from "./repo.js";
import { checkedSettings, type QueueSettings } from "./settings.js";
import { ProviderSlots } from "./slots.js";
import { providerOf, type TaskSpec } from "./spec.js";

export interface FleetWorkerOptions {
  queue: QueueSettings;
  /** The worker's own opencode (public core API only). */
  conductor: Conductor;
  /** Where repo caches and task worktrees go. */
  workspace: string;
  /** Directory roots this worker can see; `directory` tasks under them come here. */
  roots?: string[];
  /** Tasks at once on this worker (default 4). */
  concurrency?: number;
  /** Fleet-wide per-provider limits to set on start (`provider -> N`). */
  limits?: Record<string, number>;
  /** BullMQ lock on a running job; a dead worker's job moves on after about this long (default 30 s). */
  lockMs?: number;
  /** How often this worker looks for stalled jobs (default: lockMs). */
  stalledIntervalMs?: number;
  /** Times a job may be handed on after a lost worker before it fails as lost (default 2). */
  maxStalledCount?: number;
  /** A ceiling on one task; past it the turn is interrupted (default 1 h). */
  taskTimeoutMs?: number;
  id?: string;
  log?: (line: string) => void;
}

/** Retry delay when the task's provider is at its fleet-wide limit. */
const LIMITED_RETRY_MS = 400;

interface Running {
  abort: AbortController;
  attempt: Attempt;
}

export class FleetWorker {
  readonly id: string;
  readonly host = hostname();
  private readonly settings: Required<QueueSettings>;
  private readonly keys: FleetKeys;
  private readonly redis: Redis;
  private readonly sub: Redis;
  private readonly attempts: AttemptLog;
  private readonly slots: ProviderSlots;
  private readonly workers: Worker<TaskSpec, TaskOutcome>[] = [];
  private readonly running = new Map<string, Running>();
  private readonly roots: string[];
  private readonly concurrency: number;
  private free: number;
  private waiters: Array<() => void> = [];
  private heartbeat?: NodeJS.Timeout;
  private readonly startedAt = new Date().toISOString();

  constructor(private readonly o: FleetWorkerOptions) {
    this.settings = checkedSettings(o.queue);
    this.keys = keys(this.settings.prefix);
    this.id = o.id ?? `${this.host}-${process.pid}-${randomUUID().slice(0, 4)}`;
    this.redis = new Redis(this.settings.url, { maxRetriesPerRequest: null });
    this.sub = new Redis(this.settings.url, { maxRetriesPerRequest: null });
    this.redis.on("error", () => undefined);
    this.sub.on("error", () => undefined);
    this.attempts = new AttemptLog(this.redis, this.keys, this.settings.ttlS);
    this.slots = new ProviderSlots(this.redis, this.keys);
    this.roots = (o.roots ?? []).map((r) => resolve(r));
    this.concurrency = o.concurrency ?? 4;
    this.free = this.concurrency;
  }

  private log(line: string): void {
    this.o.log?.(`[worker ${this.id}] ${line}`);
  }

  async start(): Promise<void> {
    await this.redis.ping();
    if (this.roots.length) await this.redis.sadd(`${this.settings.prefix}:fleet:roots`, ...this.roots);
    if (this.o.limits && Object.keys(this.o.limits).length) await this.slots.setLimits(this.o.limits);
    await this.sub.subscribe(this.keys.cancelChannel);
    this.sub.on("message", (_channel, taskId: string) => {
      const r = this.running.get(taskId);
      if (r) {
        this.log(`cancel ${taskId}`);
        r.abort.abort();
      }
    });
    await this.advertise();
    this.heartbeat = setInterval(() => void this.advertise().catch(() => undefined), HEARTBEAT_MS);
    const lockDuration = this.o.lockMs ?? 30_000;
    for (const name of [ANY_QUEUE, ...this.roots.map(rootQueue)]) {
      const worker = new Worker<TaskSpec, TaskOutcome>(name, (job, token) => this.process(job, token), {
        connection: { url: this.settings.url, maxRetriesPerRequest: null },
        prefix: this.settings.prefix,
        // Each queue may fill every slot; the shared semaphore keeps the process at `concurrency`.
        concurrency: this.concurrency,
        lockDuration,
        stalledInterval: this.o.stalledIntervalMs ?? lockDuration,
        maxStalledCount: this.o.maxStalledCount ?? 2,
      });
      worker.on("error", (error) => this.log(`queue ${name}: ${error.message}`));
      this.workers.push(worker);
    }
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
    this.log(`serving ${[ANY_QUEUE, ...this.roots].join(", ")} with concurrency ${this.concurrency}`);
  }

  private async advertise(): Promise<void> {
    const advert: WorkerAdvert = {
      id: this.id,
      host: this.host,
      pid: process.pid,
      roots: this.roots,
      concurrency: this.concurrency,
      running: this.running.size,
      opencode: this.o.conductor.client.url,
      startedAt: this.startedAt,
      heartbeat: new Date().toISOString(),
    };
    await writeAdvert(this.redis, this.keys, advert);
    await this.slots.renewAll();
  }

  private async slot(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((r) => this.waiters.push(r));
  }

  private unslot(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.free++;
  }

  private async process(job: Job<TaskSpec, TaskOutcome>, token?: string): Promise<TaskOutcome> {
    const taskId = job.id!;
    const spec = job.data;
    await this.slot();
    const provider = providerOf(spec, this.o.conductor.settings.defaultModel);
    try {
      const begun = await beginAttempt(this.redis, this.keys, {
        provider,
        taskId,
        worker: this.id,
        host: this.host,
        retentionS: spec.retentionS ?? this.settings.ttlS,
      });
      if (begun.state === "cancelled") return await this.cancelledBeforeStart(taskId);
      if (begun.state === "limited") {
        // At the fleet's limit for this provider: back to the queue for a moment (not an attempt).
        await job.moveToDelayed(Date.now() + LIMITED_RETRY_MS + Math.floor(Math.random() * LIMITED_RETRY_MS), token);
        throw new DelayedError();
      }
      this.slots.hold(provider, taskId);
      return await this.run(job, spec, begun.attempt, begun.earlier);
    } finally {
      await this.slots.release(taskId).catch(() => undefined);
      this.unslot();
    }
  }

  private async cancelledBeforeStart(taskId: string): Promise<TaskOutcome> {
    const summary: DelegateResult = {
      sessionId: "",
      status: "error",
      answer: "",
      error: { name: "Cancelled", message: "Cancelled before a worker started it." },
    };
    return { taskId, summary, attempts: await this.attempts.list(taskId), worker: this.id, host: this.host, summaryAt: Date.now() };
  }

  private async run(job: Job<TaskSpec, TaskOutcome>, spec: TaskSpec, attempt: Attempt, earlier: Attempt[]): Promise<TaskOutcome> {
    const taskId = job.id!;
    const lost = earlier.filter((a) => a.outcome === "lost");
    this.log(`start ${taskId} (attempt ${attempt.n}${lost.length ? `; ${lost.length} earlier lost` : ""})`);
    const abort = new AbortController();
    this.running.set(taskId, { abort, attempt });
    let checkout: Checkout | undefined;
    try {
      if (spec.repo) checkout = await checkoutRepo(this.o.workspace, spec.repo, taskId, attempt.n);
      attempt.directory = checkout?.directory ?? spec.directory;
      await this.attempts.update(taskId, attempt);
      const guard = spec.guard !== false;
      const userRules = permissionRules(spec.permissions);
      let summary: DelegateResult = await this.o.conductor.delegate({
        task: spec.task,
        title: spec.title,
        directory: attempt.directory,
        model: spec.model,
        fallbackModels: spec.fallbackModels,
        retryTimeoutMs: spec.retryTimeoutMs,
        agent: spec.agent,
        agents: spec.agents,
        files: spec.files,
        command: spec.command,
        permissions: guard ? guardRules(userRules ? { userRules } : {}) : spec.permissions,
        checks: spec.checks,
        maxRounds: spec.maxRounds,
        checkTimeoutMs: spec.checkTimeoutMs,
        // Checks of unattended work run without git credentials or tokens, like the agent.
        ...(guard ? { checkEnv: guardedEnv(process.env) } : {}),
        maxTokens: spec.maxTokens,
        maxCostUsd: spec.maxCostUsd,
        detail: spec.detail,
        timeoutMs: this.o.taskTimeoutMs ?? 3600_000,
        signal: abort.signal,
        onSession: async (sessionId) => {
          attempt.sessionId = sessionId;
          await this.attempts.update(taskId, attempt);
        },
        onProgress: (p) => void job.updateProgress(p).catch(() => undefined),
      });
      if (summary.status === "running" && summary.sessionId) {
        // Cancelled or past the ceiling: stop the turn, and report what opencode recorded.
        const stopped = await this.o.conductor.interrupt(summary.sessionId, { detail: spec.detail });
        const { wasRunning: _, ...rest } = stopped;
        summary = { ...summary, ...rest };
      }
      const repo = checkout && spec.repo ? await collectRepo(checkout, spec.repo, taskId, spec.title ?? spec.task.split("\n")[0] ?? "task") : undefined;
      const summaryAt = Date.now();
      attempt.outcome = abort.signal.aborted ? "cancelled" : "finished";
      attempt.endedAt = new Date().toISOString();
      // Not awaited: the job's return value carries the attempts; this row matters only to a later reader.
      void this.attempts.update(taskId, attempt).catch(() => undefined);
      this.log(`end ${taskId}: ${summary.status}`);
      return { taskId, summary, attempts: [...earlier, attempt], worker: this.id, host: this.host, ...(repo ? { repo } : {}), summaryAt };
    } catch (error) {
      attempt.outcome = "failed";
      attempt.endedAt = new Date().toISOString();
      attempt.reason = (error as Error).message.slice(0, 500);
      await this.attempts.update(taskId, attempt).catch(() => undefined);
      this.log(`failed ${taskId}: ${attempt.reason}`);
      throw error;
    } finally {
      this.running.delete(taskId);
      if (checkout) await removeCheckout(checkout).catch(() => undefined);
    }
  }

  /** Stops taking tasks; `force` leaves running ones to the fleet (their jobs stall and move on). */
  async close(force = false): Promise<void> {
    clearInterval(this.heartbeat);
    await Promise.all(this.workers.map((w) => w.close(force).catch(() => undefined)));
    await removeAdvert(this.redis, this.keys, this.id).catch(() => undefined);
    this.sub.disconnect();
    this.redis.disconnect();
  }
}
