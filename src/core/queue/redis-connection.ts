// The caller's connections to the fleet's Redis: one ioredis client for the fleet's own keys
// (attempts, batches, homes, adverts) and one BullMQ Queue per queue name, made on first use and
// kept. Split from client.ts so the task operations (enqueue.ts, task-state.ts, wait.ts, batch.ts,
// cancel.ts, status.ts) share one place that knows how to reach Redis; TaskQueue builds on it.
import { Queue, type Job } from "bullmq";
import { Redis } from "ioredis";
import { UsageError } from "../errors.js";
import { AttemptLog } from "./attempts.js";
import { FleetEvents } from "./fleet-events.js";
import { ANY_QUEUE, keys, rootQueue, type FleetKeys } from "./names.js";
import type { TaskOutcome } from "./outcome.js";
import { validSettings, redacted, type QueueSettings } from "./settings.js";
import type { TaskSpec } from "./spec.js";

const CONNECT_TIMEOUT_MS = 10_000;

export type TaskJob = Job<TaskSpec, TaskOutcome>;

export class QueueConnection {
  readonly settings: Required<QueueSettings>;
  readonly keys: FleetKeys;
  private redisClient?: Redis;
  private ready?: Promise<void>;
  private readonly queues = new Map<string, Queue<TaskSpec, TaskOutcome>>();
  private fleetEvents?: FleetEvents;

  constructor(settings: QueueSettings) {
    this.settings = validSettings(settings);
    this.keys = keys(this.settings.prefix);
  }

  /** The fleet's own keys (attempts, batches, adverts); BullMQ keeps its own connections. */
  get redis(): Redis {
    // maxRetriesPerRequest null: a command waits through a Redis restart instead of failing.
    if (!this.redisClient) {
      this.redisClient = new Redis(this.settings.url, { maxRetriesPerRequest: null, lazyConnect: false });
      this.redisClient.on("error", () => undefined); // reconnects by itself; see reachable()
    }
    return this.redisClient;
  }

  /**
   * The first use checks that Redis answers at all (a wrong URL must not hang a caller forever);
   * afterwards commands wait through a restart.
   */
  reachable(): Promise<void> {
    this.ready ??= new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.ready = undefined;
        reject(
          new UsageError(
            `The queue's Redis at ${redacted(this.settings.url)} did not answer within ${CONNECT_TIMEOUT_MS / 1000} s: is it running, and is OPENCODE_CONDUCTOR_QUEUE right?`,
          ),
        );
      }, CONNECT_TIMEOUT_MS);
      this.redis.ping().then(
        () => (clearTimeout(timer), resolve()),
        (error: Error) => (clearTimeout(timer), (this.ready = undefined), reject(error)),
      );
    });
    return this.ready;
  }

  /** The fleet's channel (outcomes recorded, approvals asked and answered), subscribed on first use. */
  get channel(): FleetEvents {
    return (this.fleetEvents ??= new FleetEvents(this.settings.url, this.keys.events));
  }

  get attempts(): AttemptLog {
    return new AttemptLog(this.redis, this.keys, this.settings.ttlS);
  }

  queue(name: string): Queue<TaskSpec, TaskOutcome> {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue<TaskSpec, TaskOutcome>(name, { connection: { url: this.settings.url, maxRetriesPerRequest: null }, prefix: this.settings.prefix });
      q.on("error", () => undefined); // reconnects by itself; a call that cannot wait fails on its own
      this.queues.set(name, q);
    }
    return q;
  }

  /** Queues known to the fleet: the shared one and one per directory root a worker ever served. */
  async queueNames(): Promise<string[]> {
    const roots = await this.redis.smembers(this.keys.roots);
    return [ANY_QUEUE, ...roots.map(rootQueue)];
  }

  /** Closes the queues, then the fleet-keys client (a later use opens them again). */
  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close().catch(() => undefined)));
    this.queues.clear();
    this.fleetEvents?.close();
    this.fleetEvents = undefined;
    this.redisClient?.disconnect();
    this.redisClient = undefined;
  }
}
