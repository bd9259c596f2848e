// parallel(): many independent tasks, each in its own session. opencode runs sessions truly in
// parallel (notes §8); the cap only bounds how many we start at once.
import type { CoreContext } from "./context.js";
import { delegate, type DelegateOptions, type DelegateResult } from "./delegate.js";
import { UsageError } from "./errors.js";
import type { TurnProgress } from "./turn-watch.js";

export const DEFAULT_CONCURRENCY = 12;
export const MAX_CONCURRENCY = 50;

export type ParallelTask = Omit<DelegateOptions, "wait" | "timeoutMs" | "signal" | "onProgress" | "sessionId" | "fork">;

export interface ParallelOptions {
  concurrency?: number;
  /** Overall limit: unfinished tasks keep running and come back as `running` with their session ids. */
  timeoutMs?: number;
  signal?: AbortSignal;
  detail?: DelegateOptions["detail"];
  onProgress?: (index: number, progress: TurnProgress) => void;
}

export type ParallelResult = (DelegateResult & { index: number }) | { index: number; status: "error" | "not_started"; error: { name: string; message: string }; answer: ""; sessionId?: undefined };

export interface ParallelSummary {
  results: ParallelResult[];
  counts: Record<string, number>;
  /** Sessions still working when the overall timeout passed (pick them up with wait). */
  running: string[];
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

  const runOne = async (index: number): Promise<ParallelResult> => {
    const left = deadline === undefined ? undefined : deadline - Date.now();
    if ((left !== undefined && left <= 0) || o.signal?.aborted) {
      return { index, status: "not_started", answer: "", error: { name: "NotStarted", message: "The batch timed out or was cancelled before this task started; run it again." } };
    }
    try {
      const result = await delegate(ctx, {
        ...tasks[index]!,
        detail: tasks[index]!.detail ?? o.detail,
        timeoutMs: left,
        signal: o.signal,
        onProgress: o.onProgress ? (p) => o.onProgress!(index, p) : undefined,
      });
      return { ...result, index };
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
  await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker));

  const counts: Record<string, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  const running = results.flatMap((r) => (r.status === "running" && r.sessionId ? [r.sessionId] : []));
  return { results, counts, running };
}
