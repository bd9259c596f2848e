// Records a 2.x server's events (GET /api/event) from before a test's first request, so the test can
// wait on an event instead of sleeping, and read back the order events arrived in.
import type { OpencodeV2Client, V2Event } from "../../src/client/v2/index.js";
import { sessionOf } from "../../src/client/v2/index.js";

// Events about the server's set-up, not about a turn: left out of turn sequences.
const NOISE = /^(plugin\.added|.*\.updated|server\.connected|filesystem\.changed)$|\.delta$/;

export interface EventLog {
  readonly events: readonly V2Event[];
  /** Resolves with the first event (already seen or still to come) that matches. */
  waitFor(match: (e: V2Event) => boolean, options?: { timeoutMs?: number; after?: number; what?: string }): Promise<V2Event>;
  /** Event types of one session, in arrival order, without set-up noise and streaming deltas. */
  sequence(sessionID: string, from?: number): string[];
  of(sessionID: string, from?: number): V2Event[];
  stop(): void;
}

export async function recordEvents(client: OpencodeV2Client): Promise<EventLog> {
  const events: V2Event[] = [];
  const waiters = new Set<() => void>();
  const controller = new AbortController();
  let failure: unknown;
  let connected!: () => void;
  const ready = new Promise<void>((resolve) => (connected = resolve));
  void (async () => {
    try {
      for await (const event of client.events({ signal: controller.signal })) {
        if (event.type === "server.connected") connected();
        if (event.type === "conductor.reconnected") continue;
        events.push(event as V2Event);
        for (const wake of waiters) wake();
      }
    } catch (error) {
      failure = error;
      connected();
      for (const wake of waiters) wake();
    }
  })();
  await ready; // subscribed: nothing the test does from now on is missed
  if (failure) throw failure;

  const of = (sessionID: string, from = 0) => events.slice(from).filter((e) => sessionOf(e) === sessionID);
  return {
    events,
    of,
    sequence: (sessionID, from = 0) =>
      of(sessionID, from)
        .map((e) => e.type)
        .filter((t) => !NOISE.test(t)),
    waitFor(match, options = {}) {
      const { timeoutMs = 60_000, after = 0, what = "event" } = options;
      return new Promise((resolve, reject) => {
        const check = () => {
          if (failure) return done(() => reject(failure));
          const found = events.slice(after).find(match);
          if (found) done(() => resolve(found));
        };
        const timer = setTimeout(
          () =>
            done(() =>
              reject(
                new Error(
                  `no ${what} within ${timeoutMs} ms; saw: ${events
                    .slice(after)
                    .map((e) => e.type)
                    .filter((t) => !NOISE.test(t))
                    .join(", ")
                    .slice(-1500)}`,
                ),
              ),
            ),
          timeoutMs,
        );
        const done = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      });
    },
    stop: () => controller.abort(),
  };
}

/** The outcome events of a turn: the explicit 2.x evidence that a turn is over. */
export const OUTCOMES = ["session.execution.succeeded", "session.execution.failed", "session.execution.interrupted"] as const;

export const isOutcome = (sessionID: string) => (e: V2Event) => sessionOf(e) === sessionID && (OUTCOMES as readonly string[]).includes(e.type);
