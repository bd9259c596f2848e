// How a wait on a turn watch (turns/watch.ts) sleeps and wakes: waiters sleep until an event,
// their deadline or their abort signal, and checks that read the server run one after another so
// the reads and the wait loop see a consistent state. Also the wait's options and outcomes, which
// the callers that wait (turns/turn.ts, turns/blocked.ts, turns/fallback-wait.ts) share.

/**
 * How a wait ended: the turn is over, it waits on a person, the caller's time ran out, the caller
 * cancelled, or the server stopped answering (the outcome is unknown and may still come).
 */
export type WaitOutcome = "idle" | "blocked" | "timeout" | "cancelled" | "unreachable";

export interface TurnWaitOptions {
  /** Give up waiting after this long (the turn keeps running). Default: no limit. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Return `blocked` as soon as a permission or question waits (default true). */
  returnOnBlocked?: boolean;
}

/** Whether `promise` settled within `ms` (undefined: waits as long as it takes); a rejection is passed on. */
export async function settlesWithin(promise: Promise<unknown>, ms: number | undefined): Promise<boolean> {
  if (ms === undefined) return promise.then(() => true);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

export class Wakeups {
  private readonly wakers = new Set<() => void>();
  private chain: Promise<void> = Promise.resolve();

  /** Settles once the checks scheduled so far ran. */
  get checked(): Promise<void> {
    return this.chain;
  }

  /** Runs checks one after another so their reads and the wait loop see a consistent state. */
  schedule(check: () => Promise<void>): void {
    this.chain = this.chain
      .then(check)
      .catch(() => undefined)
      .then(() => this.notify());
  }

  sleep(ms: number | undefined, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.wakers.delete(done);
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
      this.wakers.add(done);
    });
  }

  notify(): void {
    for (const wake of [...this.wakers]) wake();
  }
}
