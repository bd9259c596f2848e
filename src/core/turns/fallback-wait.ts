// What waiters and summaries see of the fallback watchdog (turns/fallback-watchdog.ts): a wait
// follows the task from one attempt's watch to the next instead of stopping at the first model's
// end, and a summary of the task's turn lists the model switches. Kept apart from the watchdog so
// the class that drives the switches holds only that job.
import { waitThrough, type BlockedHandler } from "./blocked.js";
import type { CoreContext } from "../context.js";
import { lastTurn, type TurnSummary } from "./summary.js";
import type { Message } from "../model/message.js";
import type { TurnWatch } from "./watch.js";
import type { TurnWaitOptions, WaitOutcome } from "./watch-wait.js";
import { exhaustedError } from "./fallback-policy.js";
import { watchdogOf } from "./fallback-watchdog.js";

/**
 * Waits for the turn `at.watch` follows and, when a watchdog switches models, for the next
 * attempt; `at.watch` ends as the last attempt's watch. Without a watchdog: a plain wait.
 */
export async function waitTurn(ctx: CoreContext, at: { watch: TurnWatch }, options: TurnWaitOptions & { onBlocked?: BlockedHandler }): Promise<WaitOutcome> {
  const first = at.watch;
  const onProgress = first.onProgress;
  const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
  const left = () => (deadline === undefined ? undefined : Math.max(0, deadline - Date.now()));
  try {
    while (true) {
      const outcome = await waitThrough(at.watch, { ...options, timeoutMs: left() });
      if (outcome !== "idle") return outcome;
      const dog = watchdogOf(ctx, at.watch.sessionId);
      const decision = dog?.follows(at.watch) ? dog.decisionOn(at.watch) : undefined;
      if (!decision) return outcome;
      const next = await within(decision, options.signal, left());
      if (next === "timeout" || next === "cancelled") return next;
      if (!next) return "idle";
      at.watch = next;
      next.onProgress = onProgress;
    }
  } finally {
    if (at.watch !== first) at.watch.onProgress = undefined;
  }
}

function within<T>(promise: Promise<T>, signal: AbortSignal | undefined, ms: number | undefined): Promise<T | "timeout" | "cancelled"> {
  if (signal?.aborted) return Promise.resolve("cancelled");
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", cancel);
    };
    const cancel = () => {
      done();
      resolve("cancelled");
    };
    const timer = ms === undefined ? undefined : setTimeout(() => (done(), resolve("timeout")), ms);
    signal?.addEventListener("abort", cancel, { once: true });
    promise.then(
      (value) => (done(), resolve(value)),
      (error: unknown) => (done(), reject(error)),
    );
  });
}

/**
 * The attempt a watchdog of this session is on while it still switches models: its watch may have
 * ended a moment ago with the next attempt not yet sent, and a waiter must follow it, not read the
 * session as idle.
 */
export function switchingAttempt(ctx: CoreContext, sessionId: string): TurnWatch | undefined {
  const dog = watchdogOf(ctx, sessionId);
  return dog?.active ? dog.attempt : undefined;
}

/** Adds the session's model switches to a summary of the watched task's turn. */
export function withFallbacks(ctx: CoreContext, summary: TurnSummary, messages: Message[]): TurnSummary {
  const dog = watchdogOf(ctx, summary.sessionId);
  if (!dog || (dog.records.length === 0 && !dog.exhausted)) return summary;
  // Only the watched task's turn: a later turn on the session has its own user message.
  if (!dog.active && lastTurn(messages).user?.info.id !== dog.lastUserId) return summary;
  const out: TurnSummary = { ...summary, fallbacks: [...dog.records] };
  if (dog.exhausted && summary.status === "error") out.error = exhaustedError(dog.failures);
  return out;
}
