// One `/global/event` subscription shared by every waiter on a client: twelve parallel delegations
// read one stream, not twelve. The stream opens with the first listener and closes shortly after
// the last one leaves, so a script using the library can exit.
import type { OpencodeClient } from "../client/connect.js";
import type { OpencodeEvent, ReconnectedEvent } from "../client/types.js";

export type HubEvent = OpencodeEvent | ReconnectedEvent;
export type HubListener = (event: HubEvent) => void;

const LINGER_MS = 1_000;

export class EventHub {
  private readonly listeners = new Set<HubListener>();
  private controller: AbortController | undefined;
  private connected: Promise<void> | undefined;
  private lingerTimer: NodeJS.Timeout | undefined;

  constructor(private readonly client: OpencodeClient) {}

  /**
   * Adds a listener and resolves once the server has confirmed the subscription (`server.connected`),
   * so whatever the caller does next (a prompt) cannot emit events the listener misses.
   */
  async subscribe(listener: HubListener): Promise<() => void> {
    clearTimeout(this.lingerTimer);
    this.listeners.add(listener);
    const unsubscribe = () => this.remove(listener);
    try {
      await this.start();
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  /** Stops the stream now, whoever still listens. */
  close(): void {
    clearTimeout(this.lingerTimer);
    this.listeners.clear();
    this.stop();
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

  private start(): Promise<void> {
    if (this.connected) return this.connected;
    const controller = new AbortController();
    this.controller = controller;
    this.connected = new Promise<void>((resolve, reject) => {
      let ready = false;
      void (async () => {
        try {
          for await (const event of this.client.events({ signal: controller.signal })) {
            if (!ready && event.type === "server.connected") {
              ready = true;
              resolve();
            }
            for (const listener of [...this.listeners]) listener(event);
          }
        } catch (error) {
          if (!ready) reject(error);
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
}
