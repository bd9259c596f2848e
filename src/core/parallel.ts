// parallel(): many independent tasks, each in its own session. opencode runs sessions truly in
// parallel (docs/opencode-behaviour.md §8); the cap only bounds how many we start at once.
import { Budget, type BudgetCaps, type BudgetTotals } from "./governance/budget.js";
import type { CoreContext } from "./context.js";
import { delegate, type DelegateOptions, type DelegateResult } from "./delegate.js";
import { UsageError } from "./errors.js";
import { wait } from "./control.js";
import { taskSignal } from "./task-signal.js";
import type { WaitOptions } from "./turns/turn.js";
import type { TurnProgress } from "./turns/turn-progress.js";
import { DEFAULT_CONCURRENCY, MAX_CONCURRENCY } from "./parallel-limits.js";

export { DEFAULT_CONCURRENCY, MAX_CONCURRENCY } from "./parallel-limits.js";

export type ParallelTask = Omit<DelegateOptions, "wait" | "timeoutMs" | "signal" | "onProgress" | "sessionId" | "fork">;

export interface ParallelOptions {
  concurrency?: number;
  /** Overall limit: unfinished tasks keep running and come back as `running` with their session ids. */
  timeoutMs?: number;
  signal?: AbortSignal;
  detail?: DelegateOptions["detail"];
  onProgress?: (index: number, progress: TurnProgress) => void;
  /** Told each task's session id as soon as it exists. */
  onSession?: (sessionId: string, index: number) => void | Promise<void>;
  /** Handles permission requests and questions of every task (see WaitOptions.onBlocked). */
  onBlocked?: DelegateOptions["onBlocked"];
  /** A cap on the whole batch: past it every session of the batch is interrupted. */
  maxTokens?: BudgetCaps["maxTokens"];
  maxCostUsd?: BudgetCaps["maxCostUsd"];
  /** Runs one task (default: delegate here); placement gives worktree tasks their own (placement/run.ts). */
  run?(ctx: CoreContext, task: DelegateOptions): Promise<DelegateResult>;
}

export type ParallelResult =
  | (DelegateResult & { index: number })
  | { index: number; status: "error" | "not_started"; error: { name: string; message: string }; answer: ""; sessionId?: undefined };

export interface ParallelSummary {
  results: ParallelResult[];
  counts: Record<string, number>;
  /** Sessions still working when the overall timeout passed, or whose server did not answer (pick them up with wait). */
  running: string[];
  /** The batch's spend, with a cap. */
  budget?: BudgetTotals;
}

export async function parallel(ctx: CoreContext, tasks: ParallelTask[], o: ParallelOptions = {}): Promise<ParallelSummary> {
  if (!Array.isArray(tasks) || tasks.length === 0) throw new UsageError("`tasks` is empty: give at least one task.");
  const concurrency = o.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
    throw new UsageError(`concurrency must be an integer from 1 to ${MAX_CONCURRENCY} (got ${concurrency}).`);
  }
  const deadline = o.timeoutMs === undefined ? undefined : Date.now() + o.timeoutMs;
  const results: ParallelResult[] = new Array(tasks.length);
  let next = 0;
  const budget = await Budget.start(ctx, { maxTokens: o.maxTokens, maxCostUsd: o.maxCostUsd });

  const runOne = async (index: number): Promise<ParallelResult> => {
    const left = deadline === undefined ? undefined : deadline - Date.now();
    if ((left !== undefined && left <= 0) || o.signal?.aborted) {
      return {
        index,
        status: "not_started",
        answer: "",
        error: { name: "NotStarted", message: "The batch timed out or was cancelled before this task started; run it again." },
      };
    }
    if (budget?.exceeded)
      return { index, status: "not_started", answer: "", error: { name: "BudgetExceeded", message: "The batch's budget was spent before this task started." } };
    try {
      const result = await (o.run ?? delegate)(ctx, {
        ...tasks[index]!,
        detail: tasks[index]!.detail ?? o.detail,
        timeoutMs: left,
        signal: taskSignal(o.signal),
        onProgress: o.onProgress ? (p) => o.onProgress!(index, p) : undefined,
        onSession: o.onSession ? (id) => o.onSession!(id, index) : undefined,
        onBlocked: o.onBlocked,
        budget,
      });
      // The batch's totals are reported once, not per task.
      const { budget: _, ...rest } = result;
      return { ...rest, index };
    } catch (error) {
      // One task's failure never fails the batch.
      const e = error instanceof Error ? error : new Error(String(error));
      return { index, status: "error", answer: "", error: { name: e.name, message: e.message } };
    }
  };

  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await runOne(index);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker));
  } finally {
    budget?.release(); // sessions still running hold it until they settle
  }

  return { ...tally(results), ...(budget ? { budget: budget.totals } : {}) };
}

export interface WaitAllOptions extends Omit<WaitOptions, "onProgress"> {
  onProgress?: (index: number, progress: TurnProgress) => void;
  /** Waits for one session (default: wait on `ctx`); placement waits where each session lives. */
  waitFor?(sessionId: string, options: WaitOptions): Promise<DelegateResult>;
}

/**
 * Waits for a batch's sessions at once (e.g. a repeated start of the same batch, or a caller that
 * kept only the ids), in input order; a missing id is a task that never started.
 */
export async function waitAll(ctx: CoreContext, sessionIds: ReadonlyArray<string | undefined>, o: WaitAllOptions = {}): Promise<ParallelSummary> {
  const results = await Promise.all(
    sessionIds.map(async (id, index): Promise<ParallelResult> => {
      const error = (name: string, message: string) => ({ index, status: "error" as const, answer: "" as const, error: { name, message } });
      if (!id) return error("NotStarted", "This task had no session when the batch was started.");
      const onProgress = o.onProgress ? (p: TurnProgress) => o.onProgress!(index, p) : undefined;
      const { waitFor: _waitFor, ...options } = o;
      return (o.waitFor ? o.waitFor(id, { ...options, onProgress }) : wait(ctx, id, { ...options, onProgress })).then(
        (r) => ({ ...r, index }),
        (e: Error) => error(e.name, e.message),
      );
    }),
  );
  return tally(results);
}

export function tally(results: ParallelResult[]): Omit<ParallelSummary, "budget"> {
  const counts: Record<string, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  const running = results.flatMap((r) => ((r.status === "running" || r.status === "unreachable") && r.sessionId ? [r.sessionId] : []));
  return { results, counts, running };
}
