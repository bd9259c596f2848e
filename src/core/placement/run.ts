// Runs a delegation where place() put it, under the ledger: here (the core's delegate/parallel),
// on a private instance (under the guard rails, on record in the instance registry), in a worktree
// of its own (worktrees/task.ts; in a batch, per task), or as jobs for the fleet. Every start is claimed in the ledger first (start-once.ts), so a repeated request
// id replays the first start's sessions, and each task's session is recorded before its prompt is
// sent. Tasks run here or on an instance also get their lines in the task records.
import { randomUUID } from "node:crypto";
import { result as sessionResult, wait as sessionWait } from "../control.js";
import { delegate, type DelegateOptions } from "../delegate.js";
import { quoted, UsageError } from "../errors.js";
import { endLine, startLine, type TaskStartInfo } from "../governance/task-lines.js";
import { validPromptText } from "../inputs/prompt-text.js";
import type { NewRecord } from "../ledger/ledger.js";
import type { DelegationKind, LedgerEnd, LedgerRecord } from "../ledger/record.js";
import { startOnce, type StartHooks, type Started } from "../ledger/start-once.js";
import { batchStatusOf, isTerminal, statusOf } from "../ledger/status.js";
import { parallel, waitAll, type ParallelOptions, type ParallelResult, type ParallelTask, type WaitAllOptions } from "../parallel.js";
import { guardedEnv } from "../policy/guard-rails.js";
import { permissionRules } from "../policy/permissions.js";
import { taskIdFor } from "../queue/names.js";
import type { QueuedDelegateOptions, RepoSource } from "../queue/spec.js";
import type { TurnSummary } from "../turns/summary.js";
import { delegateInWorktree, withWorktree, type WorktreeTaskOptions } from "../worktrees/task.js";
import { place, type Isolation, type Placement } from "./decide.js";
import type { PlacementHost, SessionHost } from "./host.js";
import type { PlacedBatch, PlacedResult } from "./result.js";

export interface TaskOptions extends WorktreeTaskOptions {
  /**
   * `instance`: a private opencode server for `directory` (started or reused), under the guard rails.
   * `worktree`: a git worktree of the directory's repository on a branch of its own (from `base`,
   * after `setup`), with a private server there; the result says what the branch holds. Default `shared`.
   */
  isolation?: Isolation;
  /** The idempotency key: a repeat (even from another process on the same state dir or queue) starts nothing new. */
  requestId?: string;
  /** On the fleet: run on a worker, in a fresh worktree of this git repository. */
  repo?: RepoSource;
  /** Who starts it (the task records' `tool`, and the error for a request id reused by another kind of call). Default `delegate`. */
  origin?: string;
}

export type BatchTask = ParallelTask & Pick<QueuedDelegateOptions, "repo" | "guard"> & Pick<TaskOptions, "isolation" | "base" | "setup" | "setupTimeoutMs">;

export interface BatchOptions extends ParallelOptions {
  /** Each task's default: `worktree` gives every task (that names none) a worktree of its own. */
  isolation?: "shared" | "worktree";
  /** Each worktree task's default setup command. */
  setup?: string;
  /** Each worktree task's default base. */
  base?: string;
  requestId?: string;
  /** As TaskOptions.origin; default `parallel`. */
  origin?: string;
}

function placementContext(host: PlacementHost) {
  return { queued: host.queueSettings !== undefined, instances: host.instances !== undefined };
}

/** The ledger record a start claims (its origin defaults to the verb: `delegate`, `parallel`). */
function newRecord(
  host: PlacementHost,
  kind: DelegationKind,
  o: { requestId?: string; origin?: string },
  placement: Placement,
  size: number,
  governed: boolean,
): NewRecord {
  return { kind, requestId: o.requestId, origin: o.origin ?? kind, placement, server: host.engine.url, size, ...(governed ? { governed } : {}) };
}

function validateRequestId(requestId: unknown): void {
  if (requestId !== undefined && (typeof requestId !== "string" || requestId.length === 0))
    throw new UsageError(`\`requestId\` must be a non-empty string (got ${quoted(String(requestId).slice(0, 80))}).`);
}

/** Starts one task where it belongs; `accepted` resolves once its session exists (or it is queued). */
export function startTask(host: PlacementHost, o: TaskOptions): Started<PlacedResult> {
  validateRequestId(o.requestId);
  validPromptText(o.task, "task", { files: true }); // before a ledger claim or a queue carries it to a worker
  const placement = place(placementContext(host), { kind: "task", isolation: o.isolation, sessionId: o.sessionId, repo: o.repo });
  const governed = Boolean(o.checks?.length) || o.maxTokens !== undefined || o.maxCostUsd !== undefined;
  return startOnce(host.ledger, newRecord(host, "delegate", o, placement, 1, governed), {
    run: (hooks) => runTask(host, placement, o, hooks),
    replay: (record) => replayTask(host, record, o),
    endOf: taskEnd,
  });
}

/** Starts a batch (one session per task) where it belongs; `accepted` resolves once its first session exists (or it is queued). */
export function startBatch(host: PlacementHost, tasks: BatchTask[], o: BatchOptions = {}): Started<PlacedBatch> {
  validateRequestId(o.requestId);
  if (!Array.isArray(tasks) || tasks.length === 0) throw new UsageError("`tasks` is empty: give at least one task.");
  for (const t of tasks) validPromptText(t.task, "task", { files: true });
  const worktree = tasks.some((t) => (t.isolation ?? o.isolation) === "worktree");
  const placement = place(placementContext(host), { kind: "batch", worktree });
  const governed = tasks.some((t) => t.checks?.length) || o.maxTokens !== undefined || o.maxCostUsd !== undefined;
  return startOnce(host.ledger, newRecord(host, "parallel", o, placement, tasks.length, governed), {
    run: (hooks) => (placement === "queue" ? runQueuedBatch(host, tasks, o, hooks) : runBatchHere(host, tasks, o, hooks)),
    replay: (record) => replayBatch(host, record, o),
    endOf: batchEnd,
  });
}

export function taskEnd(r: PlacedResult<TurnSummary>, record: LedgerRecord): LedgerEnd | undefined {
  const status = r.task?.state === "cancelled" ? "cancelled" : statusOf(r.status, record.cancelRequestedAt !== undefined);
  return isTerminal(status) ? { status: status as LedgerEnd["status"], at: new Date().toISOString(), result: r } : undefined;
}

export function batchEnd(b: PlacedBatch, record: LedgerRecord): LedgerEnd | undefined {
  const status = batchStatusOf(
    b.results.map((r) => r.status),
    record.cancelRequestedAt !== undefined,
  );
  return isTerminal(status) ? { status: status as LedgerEnd["status"], at: new Date().toISOString(), result: b } : undefined;
}

/** The caller's signal and the ledger's cancel: either stops the wait (the turn goes on until interrupted). */
function either(a: AbortSignal | undefined, b: AbortSignal): AbortSignal {
  return a ? AbortSignal.any([a, b]) : b;
}

async function runTask(host: PlacementHost, placement: Placement, o: TaskOptions, hooks: StartHooks): Promise<PlacedResult> {
  const { isolation: _isolation, requestId: _requestId, repo, origin, base, setup, setupTimeoutMs, ...task } = o;
  const signal = either(task.signal, hooks.signal);
  if (placement === "queue") {
    const fleet = (await host.taskQueue())!;
    const queueId = taskIdFor(o.requestId);
    const queued = { ...task, repo, guard: o.guard, requestId: queueId, signal };
    const first = await fleet.delegate({ ...queued, wait: false });
    await hooks.onQueued(queueId);
    return o.wait === false ? first : fleet.wait(queueId, queued);
  }
  const info = (sessionId: string): TaskStartInfo => ({
    sessionId,
    origin: origin ?? "delegate",
    task: task.task,
    title: task.title,
    directory: task.directory,
    isolation: placement === "instance" || placement === "worktree" ? placement : undefined,
    model: task.model,
    agent: task.agent,
    fallbacks: task.fallbackModels,
    maxTokens: task.maxTokens,
    maxCostUsd: task.maxCostUsd,
    checks: task.checks,
  });
  const onSession = async (id: string) => {
    // Two files that do not depend on each other: the prompt waits for one round of writes, not two.
    await Promise.all([hooks.onSession(id, 0), recordStart(host, info(id))]);
    await task.onSession?.(id);
  };
  if (placement === "here") {
    const r = await delegate(host, { ...task, signal, onSession });
    await recordEnd(host, r);
    return r;
  }
  if (placement === "worktree") {
    const r = await delegateInWorktree(host, { ...task, base, setup, setupTimeoutMs, signal, onSession });
    await recordEnd(host, r);
    return r;
  }
  return runOnInstance(host, { ...task, signal, onSession });
}

async function runOnInstance(host: PlacementHost, task: DelegateOptions): Promise<PlacedResult> {
  const directory = task.directory ?? host.engine.directory;
  if (!directory) throw new UsageError('isolation "instance" needs `directory`: the project the private server works in.');
  const lease = await host.instances!.lease(directory);
  try {
    let attach: string | undefined;
    // Instances always run under the guard rails; the caller's rules may restrict further.
    const permissions = lease.rules(permissionRules(task.permissions));
    const result = await delegate(lease.conductor, {
      ...task,
      directory: lease.directory,
      permissions,
      checkEnv: task.checkEnv ?? guardedEnv(process.env),
      // On record while it runs, so a restart finds it.
      onSession: async (id) => {
        attach = await lease.record({ id, title: task.title ?? task.task.split("\n")[0]!.slice(0, 60), model: task.model ?? "" });
        await task.onSession?.(id);
      },
    });
    await recordEnd(host, result);
    return { ...result, isolation: "instance", ...(attach ? { attach } : {}) };
  } finally {
    lease.release();
  }
}

async function runBatchHere(host: PlacementHost, tasks: BatchTask[], o: BatchOptions, hooks: StartHooks): Promise<PlacedBatch> {
  const origin = o.origin ?? "parallel";
  // Names the batch in the task records the web console reads.
  const batchId = o.requestId ?? `batch_${randomUUID().slice(0, 8)}`;
  const { requestId: _requestId, origin: _origin, isolation, setup, base, ...options } = o;
  const inWorktree = (t: BatchTask) => (t.isolation ?? isolation) === "worktree";
  const batch = await parallel(host, tasks, {
    ...options,
    signal: either(o.signal, hooks.signal),
    // A worktree task gets its worktree (and the batch's setup and base unless it names its own).
    run: (ctx, t: BatchTask & DelegateOptions) =>
      inWorktree(t) ? delegateInWorktree(host, { ...t, setup: t.setup ?? setup, base: t.base ?? base }) : delegate(ctx, t),
    onSession: async (id, index) => {
      const t = tasks[index]!;
      const start: TaskStartInfo = {
        sessionId: id,
        origin,
        task: t.task,
        batchId,
        index,
        title: t.title,
        directory: t.directory,
        ...(inWorktree(t) ? { isolation: "worktree" as const } : {}),
        model: t.model,
        agent: t.agent,
        maxTokens: o.maxTokens,
        maxCostUsd: o.maxCostUsd,
      };
      await Promise.all([hooks.onSession(id, index), recordStart(host, start)]);
      await o.onSession?.(id, index);
    },
  });
  await recordEnds(host, batch.results);
  return batch;
}

async function runQueuedBatch(host: PlacementHost, tasks: BatchTask[], o: BatchOptions, hooks: StartHooks): Promise<PlacedBatch> {
  // The fleet's workers set how many run at once; a request in a worker's session comes to onBlocked as here.
  const fleet = (await host.taskQueue())!;
  const batchId = await fleet.enqueueBatch(tasks, { requestId: o.requestId, maxTokens: o.maxTokens, maxCostUsd: o.maxCostUsd });
  await hooks.onQueued(batchId);
  return fleet.waitBatch(batchId, {
    timeoutMs: o.timeoutMs,
    signal: either(o.signal, hooks.signal),
    detail: o.detail,
    onTaskProgress: o.onProgress,
    onBlocked: o.onBlocked,
  });
}

/** The conductor holding a session of the record: a private instance's (a worktree task's while it runs), a fleet server's (a send), or this one. */
export async function holderOf(host: PlacementHost, record: Pick<LedgerRecord, "placement" | "kind">, sessionId: string): Promise<SessionHost> {
  // A send goes to a session made by anyone: a private instance's, a worker's on the fleet, or this server's.
  if (record.kind === "send") return (await host.instances?.holding(sessionId)) ?? (await host.fleetHolder?.(sessionId)) ?? host;
  // A batch's worktree tasks run on instances too, each on its own.
  if ((record.placement !== "instance" && record.placement !== "worktree" && record.kind !== "parallel") || !host.instances) return host;
  return (await host.instances.holding(sessionId)) ?? host;
}

/** A batch's sessions waited for where each lives; a worktree task's row with its worktree report. */
export function waitBatchAt(host: PlacementHost, sessions: ReadonlyArray<string | null | undefined>, o: WaitAllOptions): Promise<PlacedBatch> {
  return waitAll(
    host,
    sessions.map((s) => s ?? undefined),
    {
      ...o,
      waitFor: async (id, options) => withWorktree(host, await sessionWait(await holderOf(host, { placement: "here", kind: "parallel" }, id), id, options)),
    },
  );
}

async function replayTask(host: PlacementHost, record: LedgerRecord, o: TaskOptions): Promise<PlacedResult> {
  const wait = {
    timeoutMs: o.timeoutMs,
    signal: o.signal,
    detail: o.detail,
    onProgress: o.onProgress,
    onBlocked: o.onBlocked,
    returnOnBlocked: o.returnOnBlocked,
  };
  if (record.placement === "queue") {
    const fleet = (await host.taskQueue())!;
    return o.wait === false ? fleet.read(record.queueId!) : fleet.wait(record.queueId!, wait);
  }
  const sessionId = record.sessions[0]!;
  const holder = await holderOf(host, record, sessionId);
  const summary = o.wait === false ? (await sessionResult(holder, sessionId, { detail: o.detail })).last : await sessionWait(holder, sessionId, wait);
  await recordEnd(host, summary);
  if (record.placement === "worktree") return withWorktree(host, summary);
  return record.placement === "instance" ? { ...summary, isolation: "instance" } : summary;
}

async function replayBatch(host: PlacementHost, record: LedgerRecord, o: BatchOptions): Promise<PlacedBatch> {
  if (record.placement === "queue") {
    const fleet = (await host.taskQueue())!;
    return fleet.waitBatch(record.queueId!, {
      timeoutMs: o.timeoutMs,
      signal: o.signal,
      detail: o.detail,
      onTaskProgress: o.onProgress,
      onBlocked: o.onBlocked,
    });
  }
  // A repeat waits for the first call's sessions (as wait would) instead of starting anything.
  const batch = await waitBatchAt(host, record.sessions, {
    timeoutMs: o.timeoutMs,
    detail: o.detail,
    signal: o.signal,
    onBlocked: o.onBlocked,
    onProgress: o.onProgress,
  });
  await recordEnds(host, batch.results);
  return batch;
}

async function recordStart(host: PlacementHost, t: TaskStartInfo): Promise<void> {
  await host.records?.append(startLine(t, { server: host.engine.url, directory: host.engine.directory, settings: host.settings }));
}

async function recordEnd(host: PlacementHost, r: TurnSummary): Promise<void> {
  await host.records?.append(endLine(r));
}

async function recordEnds(host: PlacementHost, results: ParallelResult[]): Promise<void> {
  await Promise.all(results.map((r) => (r.sessionId ? recordEnd(host, r) : undefined)));
}
