// What happens on the fleet that someone else acts on at once, over one Redis pub/sub channel: an
// attempt's outcome recorded (a waiting caller reads it without waiting for BullMQ), an attempt
// released by its worker, a worker asked whether it still runs an attempt (and its answer), a
// permission or question asked or answered in a worker's session, a batch's budget spent. A message
// is a hint to read Redis, never the only copy: whoever missed one (Redis restarted, a caller
// started later) reads the keys themselves.
import type { PendingRequest } from "../model/pending-request.js";
import { Redis } from "ioredis";

export type FleetEvent =
  | { type: "outcome"; taskId: string }
  | { type: "released"; taskId: string; n: number }
  | { type: "holds"; taskId: string; n: number; asker: string }
  | { type: "held"; taskId: string; n: number; worker: string }
  | { type: "asked"; taskId: string; request: PendingRequest; server: string }
  | { type: "answered"; taskId: string; requestId: string }
  | { type: "spent"; batchId: string };

type Listener = (event: FleetEvent) => void;

/** One subscriber connection per process, fanned out to listeners. */
export class FleetEvents {
  private sub?: Redis;
  private ready?: Promise<void>;
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly url: string,
    private readonly channel: string,
  ) {}

  /** Subscribes (once) and adds the listener; resolves when messages will reach it. */
  async listen(f: Listener): Promise<() => void> {
    this.listeners.add(f);
    await this.start();
    return () => this.listeners.delete(f);
  }

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    const sub = new Redis(this.url, { maxRetriesPerRequest: null });
    sub.on("error", () => undefined); // reconnects (and re-subscribes) by itself
    sub.on("message", (_channel: string, raw: string) => {
      let event: FleetEvent;
      try {
        event = JSON.parse(raw) as FleetEvent;
      } catch {
        return; // not ours
      }
      for (const f of [...this.listeners]) f(event);
    });
    this.sub = sub;
    this.ready = sub.subscribe(this.channel).then(() => undefined);
    return this.ready;
  }

  close(): void {
    this.listeners.clear();
    this.sub?.disconnect();
    this.sub = undefined;
    this.ready = undefined;
  }
}

export function publish(redis: Redis, channel: string, event: FleetEvent): Promise<number> {
  return redis.publish(channel, JSON.stringify(event));
}
