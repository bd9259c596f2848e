// A worker of the fleet: takes tasks from the shared queue and from the queues of the roots it
// serves, and runs each with the same core as in-process work (Conductor.delegate: the turn
// machine, fallback watchdog, checks, budgets, guard rails) against its own opencode. BullMQ holds
// a lock on each running job; a worker that stops renewing it (killed, partitioned, Redis away)
// has its job handed to another worker by BullMQ's stalled-job check. What keeps that truthful:
// each attempt's outcome is recorded in Redis as the attempt ends (outcome-record.ts), so a job
// whose completion BullMQ refused is completed from the record, never run again; a worker that
// takes over an attempt with a session re-attaches to it (reattach.ts) before it prompts anything;
// and an attempt records its session only while it still holds the task (attempts.ts), so a worker
// that lost its job never prompts. Besides tasks it takes walk jobs (a detached workflow run,
// docs/workflows.md) on a queue and BullMQ worker of their own with their own concurrency
// (`walks`), so a walk never holds a task slot the run's own tasks need.
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { DelayedError, Worker, type Job } from "bullmq";
import { Redis } from "ioredis";
import { Conductor } from "../conductor.js";
import type { DelegateResult } from "../delegate.js";
import { Budget } from "../governance/budget.js";
import { guardedEnv, guardRules } from "../policy/guard-rails.js";
import { permissionRules } from "../policy/permissions.js";
import type { BlockedHandler } from "../turns/blocked.js";
import { AnsweredElsewhere } from "../turns/pending-requests.js";
import { FailureStreak, failureText, type StreakFailure } from "../failure-streak.js";
import { writeAdvert, removeAdvert, ADVERT_TTL_S, HEARTBEAT_MS, type WorkerAdvert } from "./adverts.js";
import { clearTask, publishAnswered, publishAsked } from "./approvals.js";
import { AttemptLog, AttemptSuperseded, type Attempt } from "./attempts.js";
import { readSpend, sharedSpend } from "./batch-budget.js";
import { beginAttempt } from "./begin.js";
import { FleetEvents, publish } from "./fleet-events.js";
import { ANY_QUEUE, keys, rootQueue, WALK_QUEUE, type FleetKeys } from "./names.js";
import { AuditLog } from "../governance/audit.js";
import type { WalkJobData, WalkJobResult } from "../workflows/walk-queue.js";
import { recordOutcome, recordUnstarted } from "./outcome-record.js";
import type { TaskOutcome } from "./outcome.js";
import { DEFAULT_REATTACH_MS, reattach } from "./reattach.js";
import { adoptCheckout, checkoutRepo, collectRepo, removeCheckout, type Checkout } from "./repo.js";
import { registerServer, serverAccess, type ServerAccess } from "./servers.js";
import { validSettings, type QueueSettings } from "./settings.js";
import { JobAllowance } from "./job-allowance.js";
import { ProviderSlots } from "./slots.js";
import { providerOf, type TaskSpec } from "./spec.js";

export interface FleetWorkerOptions {
  queue: QueueSettings;
  /** The worker's own opencode (public core API only). */
  conductor: Conductor;
  /**
   * How the rest of the fleet reaches this worker's opencode (other workers re-attaching to its
   * sessions, MCP servers continuing or answering them): default its URL, with no password.
   */
  opencode?: ServerAccess;
  /** Where repo caches and task worktrees go. */
  workspace: string;
  /** Directory roots this worker can see; `directory` tasks under them come here. */
  roots?: string[];
  /** Tasks at once on this worker (default 4; 0: no tasks, walks only). */
  concurrency?: number;
  /**
   * Workflow walks at once (walk jobs of detached runs, docs/workflows.md; default 2; 0: none).
   * Apart from `concurrency`: a walk only waits while the fleet runs its steps.
   */
  walks?: number;
  /** The audit trail of the walks' steps (default: none). */
  auditPath?: string;
  /** Fleet-wide per-provider limits to set on start (`provider -> N`). */
  limits?: Record<string, number>;
  /** BullMQ lock on a running job; a dead worker's job moves on after about this long (default 30 s). */
  lockMs?: number;
  /** How often this worker looks for stalled jobs (default: lockMs). */
  stalledIntervalMs?: number;
  /** Times a job may be handed on after a worker stopped answering before it fails as unreachable (default 2). */
  maxStalledCount?: number;
  /** A ceiling on one task; past it the turn is interrupted (default 1 h). */
  taskTimeoutMs?: number;
  /** How long an earlier attempt's opencode may not answer before the task is run again instead of re-attached (default 30 s). */
  reattachMs?: number;
  id?: string;
  /** Take at most this many jobs (tasks and walks), then stop taking more (`drained` resolves once they have ended): one pod per task or per run. */
  maxJobs?: number;
  /** How often the worker renews its advert, server entry and provider slots (default 5 s; at most half the advert's 20 s life). */
  heartbeatMs?: number;
  /** Where the worker says what it does and what failed (the CLI: its stderr). */
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
  private readonly events: FleetEvents;
  private readonly attempts: AttemptLog;
  private readonly slots: ProviderSlots;
  private readonly workers: Worker<TaskSpec, TaskOutcome>[] = [];
  private walkWorker?: Worker<WalkJobData, WalkJobResult>;
  /** The walks' conductor: this worker's opencode, with the fleet's queue (a walk's steps are jobs for the fleet). */
  private walker?: Conductor;
  private readonly walkCount: number;
  /** Attempts this worker runs now, by task id (several when it re-attaches to its own attempt). */
  private readonly running = new Map<string, Running[]>();
  private readonly peers = new Map<string, Conductor>();
  private readonly roots: string[];
  private readonly concurrency: number;
  private readonly access: ServerAccess;
  private free: number;
  private waiters: Array<() => void> = [];
  private heartbeat?: NodeJS.Timeout;
  private readonly heartbeatMs: number;
  /** The heartbeat's writes: a failure said once per streak, and when it works again. */
  private readonly beats: FailureStreak;
  /** The last error of the connection to Redis (cleared when it is ready again), to say why a write does not answer. */
  private redisError?: string;
  private stopEvents?: () => void;
  private readonly startedAt = new Date().toISOString();
  private readonly allowance: JobAllowance;
  /** With `maxJobs`: resolves once that many tasks were taken and have ended. */
  readonly drained: Promise<void>;

  constructor(private readonly o: FleetWorkerOptions) {
    this.settings = validSettings(o.queue);
    this.keys = keys(this.settings.prefix);
    this.id = o.id ?? `${this.host}-${process.pid}-${randomUUID().slice(0, 4)}`;
    this.redis = new Redis(this.settings.url, { maxRetriesPerRequest: null });
    this.sub = new Redis(this.settings.url, { maxRetriesPerRequest: null });
    // ioredis reconnects by itself; its last error names why a heartbeat gets no answer meanwhile.
    this.redis.on("error", (error: Error) => (this.redisError = failureText(error, 200)));
    this.redis.on("ready", () => (this.redisError = undefined));
    this.sub.on("error", () => undefined); // the subscriber's outage is the same one, said by the heartbeat
    this.events = new FleetEvents(this.settings.url, this.keys.events);
    this.attempts = new AttemptLog(this.redis, this.keys, this.settings.ttlS);
    this.slots = new ProviderSlots(this.redis, this.keys);
    this.roots = (o.roots ?? []).map((r) => resolve(r));
    this.concurrency = o.concurrency ?? 4;
    this.walkCount = o.walks ?? 2;
    this.free = this.concurrency;
    this.access = o.opencode ?? { url: o.conductor.engine.url };
    this.allowance = new JobAllowance(o.maxJobs);
    this.drained = this.allowance.spent;
    this.heartbeatMs = o.heartbeatMs ?? HEARTBEAT_MS;
    const maxBeatMs = (ADVERT_TTL_S * 1000) / 2;
    if (!Number.isInteger(this.heartbeatMs) || this.heartbeatMs < 50 || this.heartbeatMs > maxBeatMs)
      throw new Error(`heartbeatMs must be an integer from 50 to ${maxBeatMs} (got ${String(o.heartbeatMs).slice(0, 40)})`);
    this.beats = this.redisStreak("heartbeat (advert, server entry, provider slots)");
  }

  /** The heartbeat failing now (since when, why), or undefined while it works: other processes see this worker's advert expire meanwhile. */
  get heartbeatFailure(): StreakFailure | undefined {
    return this.beats.failing;
  }

  /** Repeated writes to Redis (`what`, for the log): a failure said once per streak, a write with no answer within a beat counted as one. */
  private redisStreak(what: string): FailureStreak {
    return new FailureStreak(what, (line) => this.log(line), { boundMs: this.heartbeatMs, from: "Redis", cause: () => this.redisError });
  }

  /** A one-off write whose failure is logged (what, and the error), never thrown: the caller goes on as before. */
  private async reported(what: string, write: Promise<unknown>): Promise<void> {
    try {
      await write;
    } catch (error) {
      this.log(`${what} failed: ${failureText(error)}`);
    }
  }

  private log(line: string): void {
    this.o.log?.(`[worker ${this.id}] ${line}`);
  }

  async start(): Promise<void> {
    await this.redis.ping();
    if (this.roots.length) await this.redis.sadd(this.keys.roots, ...this.roots);
    if (this.o.limits && Object.keys(this.o.limits).length) await this.slots.setLimits(this.o.limits);
    await this.sub.subscribe(this.keys.cancelChannel);
    this.sub.on("message", (_channel, taskId: string) => {
      for (const r of this.running.get(taskId) ?? []) {
        this.log(`cancel ${taskId} (attempt ${r.attempt.n})`);
        r.abort.abort();
      }
    });
    // Another worker asks whether an attempt it is taking over still runs here (reattach.ts).
    this.stopEvents = await this.events.listen((e) => {
      if (e.type !== "holds" || !this.running.get(e.taskId)?.some((r) => r.attempt.n === e.n)) return;
      void this.reported(`held reply for ${e.taskId}`, publish(this.redis, this.keys.events, { type: "held", taskId: e.taskId, n: e.n, worker: this.id }));
    });
    await this.advertise();
    this.heartbeat = setInterval(() => void this.beats.run(() => this.advertise()), this.heartbeatMs);
    for (const name of this.concurrency > 0 ? [ANY_QUEUE, ...this.roots.map(rootQueue)] : []) {
      // Each queue may fill every slot; the shared semaphore keeps the process at `concurrency`.
      this.workers.push(this.bullWorker<TaskSpec, TaskOutcome>(name, (job, token) => this.process(job, token), this.concurrency));
    }
    if (this.walkCount > 0) {
      const c = this.o.conductor;
      this.walker = new Conductor({
        url: c.engine.url,
        password: this.access.password,
        username: this.access.username,
        ...c.settings,
        // The walk's worktree steps and their records (the ledger itself is in Redis).
        stateDir: join(resolve(this.o.workspace), "walker"),
        queue: this.settings,
      });
      const audit = this.o.auditPath ? new AuditLog(this.o.auditPath) : undefined;
      this.walkWorker = this.bullWorker<WalkJobData, WalkJobResult>(WALK_QUEUE, (job, token) => this.walk(job, token, audit), this.walkCount);
    }
    await Promise.all([...this.workers, ...(this.walkWorker ? [this.walkWorker] : [])].map((w) => w.waitUntilReady()));
    const tasks = this.concurrency > 0 ? `${[ANY_QUEUE, ...this.roots].join(", ")} with concurrency ${this.concurrency}` : "no tasks";
    this.log(`serving ${tasks}; ${this.walkCount} walk${this.walkCount === 1 ? "" : "s"} at once`);
  }

  /** A BullMQ worker on `name` of this fleet, with this worker's lock and stalled-job settings (the same for tasks and walks). */
  private bullWorker<D, R>(name: string, work: (job: Job<D, R>, token?: string) => Promise<R>, concurrency: number): Worker<D, R> {
    const lockDuration = this.o.lockMs ?? 30_000;
    const worker = new Worker<D, R>(name, work, {
      connection: { url: this.settings.url, maxRetriesPerRequest: null },
      prefix: this.settings.prefix,
      concurrency,
      lockDuration,
      stalledInterval: this.o.stalledIntervalMs ?? lockDuration,
      maxStalledCount: this.o.maxStalledCount ?? 2,
    });
    worker.on("error", (error) => this.log(`queue ${name}: ${error.message}`));
    return worker;
  }

  /** A walk job: the run walked here until it ends or stops at a sign-off (walk-job.ts). */
  private async walk(job: Job<WalkJobData, WalkJobResult>, token: string | undefined, audit: AuditLog | undefined): Promise<WalkJobResult> {
    if (!this.allowance.take()) {
      // Past --max-jobs: back for another worker, untouched.
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (this.allowance.full) this.takeNoMore();
    this.log(`walk ${job.data.runId} (job ${job.id})`);
    try {
      const { runWalkJob } = await import("../workflows/walk-job.js");
      const result = await runWalkJob(this.walker!, job.data, job.id!, audit, (line) => this.log(line));
      this.log(`walked ${job.data.runId}: ${result.superseded ? "superseded by a newer walk job" : result.status}`);
      return result;
    } catch (error) {
      this.log(`walk ${job.data.runId} failed: ${(error as Error).message}`);
      throw error;
    } finally {
      this.allowance.end();
    }
  }

  private async advertise(): Promise<void> {
    const advert: WorkerAdvert = {
      id: this.id,
      host: this.host,
      pid: process.pid,
      roots: this.roots,
      concurrency: this.concurrency,
      walks: this.walkCount,
      running: [...this.running.values()].reduce((n, list) => n + list.length, 0),
      opencode: this.access.url,
      startedAt: this.startedAt,
      heartbeat: new Date().toISOString(),
    };
    await writeAdvert(this.redis, this.keys, advert);
    // The server outlives this worker in the table (its sessions may be followed after it is gone).
    await registerServer(this.redis, this.keys, this.access, this.settings.ttlS);
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
    if (!this.allowance.take()) {
      // Past --max-jobs (another queue's worker fetched it meanwhile): back for another worker, not an attempt.
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (this.allowance.full) this.takeNoMore();
    let counted = true;
    await this.slot();
    const provider = providerOf(spec, this.o.conductor.settings.defaultModel);
    try {
      if (spec.batchBudget && (await readSpend(this.redis, this.keys, spec.batchBudget.batchId)).exceeded)
        return await this.notStarted(taskId, spec.retentionS ?? this.settings.ttlS);
      const begun = await beginAttempt(this.redis, this.keys, {
        provider,
        taskId,
        worker: this.id,
        host: this.host,
        retentionS: spec.retentionS ?? this.settings.ttlS,
      });
      if (begun.state === "recorded") {
        // An attempt finished but BullMQ never heard of it (its worker lost its lock): completed from its record.
        this.log(`complete ${taskId} from its recorded outcome (attempt ${begun.outcome.attempts.at(-1)?.n ?? "?"}): not run again`);
        return begun.outcome;
      }
      if (begun.state === "cancelled") return await this.cancelledBeforeStart(taskId, spec.retentionS ?? this.settings.ttlS);
      if (begun.state === "limited") {
        // At the fleet's limit for this provider: back to the queue for a moment (not an attempt).
        counted = false;
        this.allowance.giveBack();
        if (!this.allowance.full) for (const w of this.workers) if (w.isPaused()) w.resume();
        await job.moveToDelayed(Date.now() + LIMITED_RETRY_MS + Math.floor(Math.random() * LIMITED_RETRY_MS), token);
        throw new DelayedError();
      }
      this.slots.hold(provider, taskId);
      return await this.run(job, spec, begun.attempt, begun.earlier);
    } finally {
      await this.reported(`releasing ${taskId}'s provider slot`, this.slots.release(taskId));
      this.unslot();
      if (counted) this.allowance.end();
    }
  }

  /** --max-jobs reached: the queues' workers fetch nothing more (the running tasks go on). */
  private takeNoMore(): void {
    this.log(`took ${this.allowance.max} job${this.allowance.max === 1 ? "" : "s"} (max-jobs): taking no more`);
    for (const w of [...this.workers, ...(this.walkWorker ? [this.walkWorker] : [])]) void w.pause(true).catch(() => undefined);
  }

  /** A task cancelled before any attempt began: nothing was sent to opencode (on record before BullMQ hears of it). */
  private async cancelledBeforeStart(taskId: string, retentionS: number): Promise<TaskOutcome> {
    const summary: DelegateResult = {
      sessionId: "",
      status: "error",
      answer: "",
      error: { name: "Cancelled", message: "Cancelled before a worker started it." },
    };
    const outcome: TaskOutcome = { taskId, summary, attempts: await this.attempts.list(taskId), worker: this.id, host: this.host, summaryAt: Date.now() };
    return recordUnstarted(this.redis, this.keys, outcome, retentionS);
  }

  /** A task of a batch whose shared budget was spent before it started, as in process (on record before BullMQ hears of it). */
  private async notStarted(taskId: string, retentionS: number): Promise<TaskOutcome> {
    const summary = {
      sessionId: "",
      status: "not_started",
      answer: "",
      error: { name: "BudgetExceeded", message: "The batch's budget was spent before this task started." },
    } as unknown as DelegateResult;
    const outcome: TaskOutcome = { taskId, summary, attempts: await this.attempts.list(taskId), worker: this.id, host: this.host, summaryAt: Date.now() };
    return recordUnstarted(this.redis, this.keys, outcome, retentionS);
  }

  /** A conductor on a server of the fleet (this worker's own, or another worker's from the server table). */
  private async conductorFor(url: string): Promise<Conductor | undefined> {
    if (url === this.access.url) return this.o.conductor;
    const known = this.peers.get(url);
    if (known) return known;
    const access = await serverAccess(this.redis, this.keys, url);
    if (!access) return undefined;
    const peer = new Conductor({ url: access.url, password: access.password, username: access.username, ...this.o.conductor.settings, queue: false });
    this.peers.set(url, peer);
    return peer;
  }

  /** Publishes each request of the session in Redis and waits until someone answers it on opencode (or the task stops). */
  private approvals(taskId: string, server: string): BlockedHandler {
    return async (request, o) => {
      await publishAsked(this.redis, this.keys, { taskId, server, worker: this.id, askedAt: Date.now(), request }, this.settings.ttlS);
      this.log(`${taskId} waits for an answer to ${request.id} (${request.kind})`);
      await new Promise<void>((resolve) => {
        if (o.signal?.aborted) return resolve();
        const done = () => (clearTimeout(timer), o.signal?.removeEventListener("abort", done), resolve());
        const timer = o.timeoutMs === undefined ? undefined : setTimeout(done, o.timeoutMs);
        o.signal?.addEventListener("abort", done, { once: true });
      });
      const answered = o.signal?.reason instanceof AnsweredElsewhere;
      if (answered) await this.reported(`publishing ${request.id} answered`, publishAnswered(this.redis, this.keys, taskId, request.id));
      return answered ? "handled" : "return";
    };
  }

  private async run(job: Job<TaskSpec, TaskOutcome>, spec: TaskSpec, attempt: Attempt, earlier: Attempt[]): Promise<TaskOutcome> {
    const taskId = job.id!;
    const gone = earlier.filter((a) => a.outcome === "unreachable");
    const how = attempt.reattach ? `; re-attaching to attempt ${attempt.reattach.of}'s session ${attempt.sessionId}` : "";
    this.log(`start ${taskId} (attempt ${attempt.n}${gone.length ? `; ${gone.length} earlier unreachable` : ""}${how})`);
    const abort = new AbortController();
    const mine: Running = { abort, attempt };
    this.running.set(taskId, [...(this.running.get(taskId) ?? []), mine]);
    const retentionS = spec.retentionS ?? this.settings.ttlS;
    const ceiling = Date.now() + (this.o.taskTimeoutMs ?? 3600_000);
    const progress = this.redisStreak(`progress of ${taskId}`);
    const onProgress = (p: Parameters<NonNullable<Parameters<Conductor["delegate"]>[0]["onProgress"]>>[0]) => void progress.run(() => job.updateProgress(p));
    let checkout: Checkout | undefined;
    let budget: Budget | undefined;
    try {
      let summary: DelegateResult | undefined;
      let holder = this.o.conductor;
      if (attempt.reattach) {
        const r = await reattach({
          taskId,
          spec,
          attempt,
          earlier,
          worker: this.id,
          redis: this.redis,
          keys: this.keys,
          events: this.events,
          conductorFor: (url) => this.conductorFor(url),
          boundMs: this.o.reattachMs ?? DEFAULT_REATTACH_MS,
          timeoutMs: Math.max(0, ceiling - Date.now()),
          signal: abort.signal,
          onProgress,
          onBlocked: attempt.server ? this.approvals(taskId, attempt.server) : undefined,
          log: (line) => this.log(line),
        });
        if (r.kind === "recorded") {
          attempt.outcome = "finished";
          attempt.endedAt = new Date().toISOString();
          attempt.reason = `took the outcome worker ${r.outcome.worker} recorded for the session it followed`;
          return await recordOutcome(this.redis, this.keys, r.outcome, attempt, retentionS);
        }
        if (r.kind === "followed") {
          summary = r.summary;
          holder = r.holder;
        } else {
          this.log(`re-run ${taskId}: ${r.reason}`);
          Object.assign(attempt, { rerun: r.reason, reattach: undefined, sessionId: undefined, server: undefined, directory: undefined });
          if (!(await this.attempts.update(taskId, attempt))) throw new AttemptSuperseded(taskId, attempt.n);
        }
      }
      // A followed session's worktree is the earlier attempt's (reattach.ts checked it is on this machine).
      if (spec.repo)
        checkout = summary ? await adoptCheckout(attempt.directory!, attempt.base!) : await checkoutRepo(this.o.workspace, spec.repo, taskId, attempt.n);
      if (!summary) {
        attempt.directory = checkout?.directory ?? spec.directory;
        attempt.base = checkout?.base;
        if (!(await this.attempts.update(taskId, attempt))) throw new AttemptSuperseded(taskId, attempt.n);
        const guard = spec.guard !== false;
        const userRules = permissionRules(spec.permissions);
        if (spec.batchBudget)
          budget = await Budget.start(
            this.o.conductor,
            { maxTokens: spec.batchBudget.maxTokens, maxCostUsd: spec.batchBudget.maxCostUsd },
            sharedSpend(this.redis, this.keys, this.events, spec.batchBudget.batchId, retentionS),
          );
        summary = await this.o.conductor.delegate({
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
          ...(budget ? { budget } : {}),
          detail: spec.detail,
          timeoutMs: Math.max(0, ceiling - Date.now()),
          signal: abort.signal,
          // On record (and fenced) before the prompt: a worker that lost the task stops here.
          onSession: (sessionId) => this.attempts.recordSession(taskId, attempt, sessionId, this.access.url),
          onBlocked: this.approvals(taskId, this.access.url),
          onProgress,
        });
      }
      if (summary.status === "unreachable" && summary.sessionId && !spec.checks?.length && !abort.signal.aborted) {
        // The session's opencode did not answer: the outcome may still come, so wait for it in the
        // task's time rather than report it unknown at once. (With checks the gate already stopped: left as is.)
        const waited = await holder.wait(summary.sessionId, {
          detail: spec.detail,
          timeoutMs: Math.max(0, ceiling - Date.now()),
          signal: abort.signal,
        });
        const { error: _unknown, ...kept } = summary; // the wait's answer says how it stands now
        summary = { ...kept, ...waited };
      }
      if ((summary.status === "running" || summary.status === "blocked") && summary.sessionId) {
        // Cancelled or past the ceiling: stop the turn, and report what opencode recorded.
        const stopped = await holder.interrupt(summary.sessionId, { detail: spec.detail });
        const { wasRunning: _, ...rest } = stopped;
        summary = { ...summary, ...rest };
      }
      if (budget) {
        const { budget: _, ...rest } = summary; // the batch's totals are reported once, with the batch
        summary = rest;
      }
      const repo = checkout && spec.repo ? await collectRepo(checkout, spec.repo, taskId, spec.title ?? spec.task.split("\n")[0] ?? "task") : undefined;
      attempt.outcome = abort.signal.aborted ? "cancelled" : "finished";
      attempt.endedAt = new Date().toISOString();
      this.log(`end ${taskId}: ${summary.status}`);
      // Recorded before BullMQ hears of it: if BullMQ refuses the completion (this worker lost its
      // lock), the next worker to take the job completes it from this record.
      const outcome: TaskOutcome = { taskId, summary, attempts: [], worker: this.id, host: this.host, ...(repo ? { repo } : {}), summaryAt: Date.now() };
      return await recordOutcome(this.redis, this.keys, outcome, attempt, retentionS);
    } catch (error) {
      if (error instanceof AttemptSuperseded) {
        // Another worker holds the task now: its row is not ours to write; the session never got a prompt.
        this.log(`stop ${taskId}: ${error.message}`);
        if (error.sessionId) await this.reported(`removing session ${error.sessionId}`, this.o.conductor.engine.remove(error.sessionId));
        throw error;
      }
      attempt.outcome = "failed";
      attempt.endedAt = new Date().toISOString();
      attempt.reason = (error as Error).message.slice(0, 500);
      await this.reported(`recording attempt ${attempt.n} of ${taskId} as failed`, this.attempts.update(taskId, attempt));
      this.log(`failed ${taskId}: ${attempt.reason}`);
      throw error;
    } finally {
      budget?.release();
      const left = (this.running.get(taskId) ?? []).filter((r) => r !== mine);
      if (left.length) this.running.set(taskId, left);
      else this.running.delete(taskId);
      await this.reported(`clearing ${taskId}'s approvals`, clearTask(this.redis, this.keys, taskId));
      void this.reported(`publishing ${taskId} released`, publish(this.redis, this.keys.events, { type: "released", taskId, n: attempt.n }));
      if (checkout) await this.reported(`removing ${taskId}'s checkout`, removeCheckout(checkout));
    }
  }

  /** Stops taking tasks; `force` leaves running ones to the fleet (their jobs stall and move on). */
  async close(force = false): Promise<void> {
    clearInterval(this.heartbeat);
    await Promise.all([...this.workers, ...(this.walkWorker ? [this.walkWorker] : [])].map((w) => w.close(force).catch(() => undefined)));
    this.walker?.close();
    // Bounded: with Redis away the command would wait for it forever and the worker never stop (the advert expires by itself).
    const leaving = this.redisStreak("removing the advert");
    await leaving.run(() => removeAdvert(this.redis, this.keys, this.id));
    this.stopEvents?.();
    this.events.close();
    for (const peer of this.peers.values()) peer.close();
    this.sub.disconnect();
    this.redis.disconnect();
  }
}
