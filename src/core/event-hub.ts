// One event subscription (1.x `/global/event`, 2.x `/api/event`, through the engine) shared by every waiter on a server: twelve parallel delegations
// read one stream, not twelve. The stream opens with the first listener and closes shortly after
// the last one leaves, so a script using the library can exit. When the stream drops, the hub asks
// the server's health at once, and tells every listener what the answer means:
// - the port refuses the connection: the process is gone, and its turns with it (`conductor.lost`,
//   within a second or two instead of waiting out the reconnect attempts);
// - no answer (a hung, stopped or cut-off server): nobody knows what its turns do
//   (`conductor.unreachable`); the stream keeps reconnecting, and the health check is repeated, so a
//   server that answers again brings `conductor.reconnected` and one that dies meanwhile `conductor.lost`.
// With many sessions in flight, each event goes only to the listeners that follow a session it names
// (a listener that says which it follows), and an event naming only sessions nobody follows is dropped
// by the stream before it is parsed (client/event-sessions.ts): fifty turns do not each read every
// event of the other forty-nine.
import { ConnectionError, OpencodeError, connectionRefused, connectionReset, safeUrl } from "../client/errors.js";
import { sessionsNamedBy } from "../client/event-sessions.js";
import type { Engine } from "./engine/engine.js";
import type { HubEvent } from "./engine/hub-events.js";

export type { HubEvent, ServerLostEvent, ServerUnreachableEvent, V2HubEvent } from "./engine/hub-events.js";
/** What the hub reads: the engine's event stream and its health route. */
export type HubSource = Pick<Engine, "url" | "events" | "health">;
export type HubListener = (event: HubEvent) => void;
/** Told when the stream is gone for good (closed, or failed and not reconnecting). */
export type HubErrorListener = (error: Error) => void;

/** The stream gave up; `unanswered`: because the server stopped answering (not because it refused us). */
export class StreamFailedError extends Error {
  override name = "StreamFailedError";
  constructor(
    message: string,
    readonly unanswered: boolean,
  ) {
    super(message);
  }
}

/**
 * Which sessions a listener follows, asked for each event that names sessions (it may change: a watch
 * adds the sub-agents it sees, whose creation names their parent). Without it a listener hears everything.
 */
export type Follows = (sessionId: string) => boolean;

/** What a waiter needs from the hub (tests pass a fake). */
export interface EventSource {
  subscribe(listener: HubListener, onError?: HubErrorListener, follows?: Follows): Promise<() => void>;
  /** When the stream last brought data, heartbeats included (epoch ms; 0: never): it is live, whatever it carries. */
  heardAt?(): number;
  /** The project directory a permission request or question came from, if the hub saw it asked. */
  directoryOf?(requestId: string): string | undefined;
}

const LINGER_MS = 1_000;
/** A live opencode answers its health route in milliseconds; this much silence means it does not answer. */
const PROBE_TIMEOUT_MS = 1_000;
/** While a server does not answer, how often its health is asked again (one that dies meanwhile is lost). */
const REPROBE_MS = 5_000;
/** A reset health check is asked again this often, at most MAX_RESETS times; then the server counts as not answering. */
const RESET_RETRY_MS = 100;
const MAX_RESETS = 10;
const MAX_REQUESTS_REMEMBERED = 1_000;

export class EventHub implements EventSource {
  private readonly listeners = new Map<HubListener, { onError: HubErrorListener | undefined; follows: Follows | undefined }>();
  private controller: AbortController | undefined;
  private connected: Promise<void> | undefined;
  private lingerTimer: NodeJS.Timeout | undefined;
  /** The stream's current outage, while one is being probed (cleared when it is back). */
  private outage: object | undefined;
  // Requests live per directory instance (docs/opencode-behaviour.md §5, §9): answering one needs its directory.
  private readonly requestDirs = new Map<string, string>();
  private lastData = 0;

  constructor(private readonly source: HubSource) {}

  /**
   * Adds a listener and resolves once the server has confirmed the subscription (`server.connected`),
   * so whatever the caller does next (a prompt) cannot emit events the listener misses.
   */
  async subscribe(listener: HubListener, onError?: HubErrorListener, follows?: Follows): Promise<() => void> {
    clearTimeout(this.lingerTimer);
    this.listeners.set(listener, { onError, follows });
    const unsubscribe = () => this.remove(listener);
    try {
      await this.start();
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  heardAt(): number {
    return this.lastData;
  }

  directoryOf(requestId: string): string | undefined {
    return this.requestDirs.get(requestId);
  }

  /** Stops the stream now; every listener still subscribed is told it ended. */
  close(): void {
    clearTimeout(this.lingerTimer);
    const orphans = [...this.listeners.values()];
    this.listeners.clear();
    this.stop();
    for (const { onError } of orphans) onError?.(new Error("The conductor was closed while waiting for a turn."));
  }

  private remove(listener: HubListener): void {
    this.listeners.delete(listener);
    if (this.listeners.size > 0) return;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = setTimeout(() => {
      if (this.listeners.size === 0) this.stop();
    }, LINGER_MS);
    this.lingerTimer.unref();
  }

  private stop(): void {
    this.controller?.abort();
    this.controller = undefined;
    this.connected = undefined;
    this.outage = undefined;
  }

  /** Whether an event naming `sessions` (in its raw text `data`) matters to anyone: false drops it unparsed. */
  private wanted(sessions: readonly string[], data: string): boolean {
    // A request asked is remembered for whoever answers it later (directoryOf), followed or not.
    if (data.includes('.asked"')) return true;
    for (const { follows } of this.listeners.values()) if (!follows || sessions.some(follows)) return true;
    return false;
  }

  private dispatch(event: HubEvent): void {
    this.remember(event);
    const sessions = sessionsNamedBy(event) ?? (event.type === "v2.event" ? sessionsNamedBy(event.properties) : undefined);
    for (const [listener, { follows }] of [...this.listeners]) {
      if (follows && sessions && sessions.length > 0 && !sessions.some(follows)) continue;
      try {
        listener(event);
      } catch {
        // one faulty listener must not end the stream for everyone
      }
    }
  }

  private remember(event: HubEvent): void {
    if ((event.type === "permission.asked" || event.type === "question.asked") && event.directory) {
      if (this.requestDirs.size >= MAX_REQUESTS_REMEMBERED) this.requestDirs.delete(this.requestDirs.keys().next().value!);
      this.requestDirs.set(event.properties.id, event.directory);
    }
  }

  private start(): Promise<void> {
    if (this.connected) return this.connected;
    const controller = new AbortController();
    this.controller = controller;
    this.connected = new Promise<void>((resolve, reject) => {
      let ready = false;
      void (async () => {
        try {
          const options = {
            signal: controller.signal,
            wanted: (sessions: readonly string[], data: string) => this.wanted(sessions, data),
            onData: () => (this.lastData = Date.now()),
          };
          for await (const event of this.source.events(options)) {
            if (!ready && event.type === "server.connected") {
              ready = true;
              resolve();
            }
            if (event.type === "server.connected") this.outage = undefined;
            this.dispatch(event);
            if (event.type === "conductor.disconnected") void this.probe(controller, event.properties.message);
          }
        } catch (error) {
          if (!ready) reject(error);
          else if (this.controller === controller) this.failAll(error);
        } finally {
          // The stream ended for good (aborted, or an error after it was up): let the next subscriber restart it.
          if (this.controller === controller) {
            this.controller = undefined;
            this.connected = undefined;
          }
        }
      })();
    });
    return this.connected;
  }

  /**
   * The stream dropped: ask the server's health. Refused: it is gone (the stream is dropped too).
   * No answer: say so once, and ask again every REPROBE_MS until the stream is back or it refuses.
   */
  private async probe(controller: AbortController, why: string): Promise<void> {
    const outage = {};
    this.outage = outage;
    const current = () => this.controller === controller && this.outage === outage;
    let told = false;
    let resets = 0;
    let silent = 0;
    while (current()) {
      const answer = await this.source.health(PROBE_TIMEOUT_MS).then(
        () => "answered" as const,
        (error: unknown) =>
          connectionRefused(error)
            ? "refused"
            : connectionReset(error)
              ? "reset"
              : error instanceof OpencodeError && !(error instanceof ConnectionError)
                ? "answered"
                : "silent",
      );
      // An answer, even an HTTP error, is a server that is there: the stream's reconnect will find it.
      if (!current() || answer === "answered") return;
      // Closed before any answer: a process that is exiting still holds its port for a moment and drops
      // what it accepted (a hung one never closes), so ask again shortly rather than call it silent.
      if (answer === "reset" && resets++ < MAX_RESETS) {
        await pause(RESET_RETRY_MS, controller.signal);
        continue;
      }
      const url = safeUrl(this.source.url);
      if (answer === "refused") {
        const message = `opencode at ${url} is gone (event stream: ${why}; its port refuses connections): the process that ran this turn stopped, so no end of it will ever be recorded. Once opencode runs again, read the session to see what it kept, and continue it if needed.`;
        this.dispatch({ type: "conductor.lost", properties: { error: { name: "ServerLost", message } } });
        // The next subscriber starts a new stream, which fails at once while the server is down.
        this.stop();
        return;
      }
      // One silent check may be our own event loop held past the limit (a dead port refuses at once,
      // but its refusal waits behind the timer on a busy machine): ask once more before saying so.
      if (answer === "silent" && silent++ < 1) continue;
      if (!told) {
        told = true;
        const message = `opencode at ${url} does not answer (event stream: ${why}; no answer to two health checks of ${PROBE_TIMEOUT_MS / 1000} s): it may be hung, stopped or cut off. The turn's outcome is unknown and may still come: ask again with the session id; do not send the task again until opencode answers.`;
        this.dispatch({ type: "conductor.unreachable", properties: { error: { name: "ServerUnreachable", message } } });
      }
      await pause(REPROBE_MS, controller.signal);
    }
  }

  /** The stream failed and will not come back by itself: waiters would otherwise hang. */
  private failAll(error: unknown): void {
    const e = error instanceof Error ? error : new Error(String(error));
    const failure = new StreamFailedError(`The opencode event stream failed: ${e.message}`, error instanceof ConnectionError);
    for (const { onError } of [...this.listeners.values()]) onError?.(failure);
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener("abort", done, { once: true });
  });
}
