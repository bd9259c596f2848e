// One event subscription (1.x `/global/event`, 2.x `/api/event`, through the engine) shared by every waiter on a server: twelve parallel delegations
// read one stream, not twelve. The stream opens with the first listener and closes shortly after
// the last one leaves, so a script using the library can exit. When the stream drops, the hub asks
// the server's health at once: a server that does not answer is gone, and every listener hears
// `conductor.lost` within a second or two instead of waiting out the reconnect attempts.
import { safeUrl } from "../client/errors.js";
import type { Engine } from "./engine/engine.js";
import type { HubEvent } from "./engine/events.js";

export type { HubEvent, ServerLostEvent, V2HubEvent } from "./engine/events.js";
/** What the hub reads: the engine's event stream and its health route. */
export type HubSource = Pick<Engine, "url" | "events" | "health">;
export type HubListener = (event: HubEvent) => void;
/** Told when the stream is gone for good (closed, or failed and not reconnecting). */
export type HubErrorListener = (error: Error) => void;

/** What a waiter needs from the hub (tests pass a fake). */
export interface EventSource {
  subscribe(listener: HubListener, onError?: HubErrorListener): Promise<() => void>;
  /** The project directory a permission request or question came from, if the hub saw it asked. */
  directoryOf?(requestId: string): string | undefined;
}

const LINGER_MS = 1_000;
/** A live opencode answers its health route in milliseconds; this much silence means it is gone. */
const PROBE_TIMEOUT_MS = 1_000;
const MAX_REQUESTS_REMEMBERED = 1_000;

export class EventHub implements EventSource {
  private readonly listeners = new Map<HubListener, HubErrorListener | undefined>();
  private controller: AbortController | undefined;
  private connected: Promise<void> | undefined;
  private lingerTimer: NodeJS.Timeout | undefined;
  // Requests live per directory instance (docs/opencode-behaviour.md §5, §9): answering one needs its directory.
  private readonly requestDirs = new Map<string, string>();

  constructor(private readonly source: HubSource) {}

  /**
   * Adds a listener and resolves once the server has confirmed the subscription (`server.connected`),
   * so whatever the caller does next (a prompt) cannot emit events the listener misses.
   */
  async subscribe(listener: HubListener, onError?: HubErrorListener): Promise<() => void> {
    clearTimeout(this.lingerTimer);
    this.listeners.set(listener, onError);
    const unsubscribe = () => this.remove(listener);
    try {
      await this.start();
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
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
    for (const onError of orphans) onError?.(new Error("The conductor was closed while waiting for a turn."));
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
  }

  private dispatch(event: HubEvent): void {
    this.remember(event);
    for (const listener of [...this.listeners.keys()]) {
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
          for await (const event of this.source.events({ signal: controller.signal })) {
            if (!ready && event.type === "server.connected") {
              ready = true;
              resolve();
            }
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

  /** The stream dropped: if the server does not answer either, it is gone (the stream is dropped too). */
  private async probe(controller: AbortController, why: string): Promise<void> {
    const answered = await this.source.health(PROBE_TIMEOUT_MS).then(
      () => true,
      () => false,
    );
    if (answered || this.controller !== controller) return;
    const message = `opencode at ${safeUrl(this.source.url)} went away (event stream: ${why}; no answer to a health check). Its outcome is unknown until it is back: then ask again with the session id.`;
    this.dispatch({ type: "conductor.lost", properties: { error: { name: "ServerLost", message } } });
    // The next subscriber starts a new stream, which fails at once while the server is down.
    this.stop();
  }

  /** The stream failed and will not come back by itself: waiters would otherwise hang. */
  private failAll(error: unknown): void {
    const e = error instanceof Error ? error : new Error(String(error));
    for (const onError of [...this.listeners.values()]) onError?.(new Error(`The opencode event stream failed: ${e.message}`));
  }
}
