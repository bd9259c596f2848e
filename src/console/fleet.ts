// The console over the fleet's queue (with OPENCODE_CONDUCTOR_QUEUE): the queued, running and
// finished tasks with their worker and attempts, the workers with their load and the provider
// slots, cancel from the page, and the permission requests and questions waiting in worker
// sessions, which the workers publish in Redis (core/queue/approvals.ts). Those are answered like
// any other, on the worker's opencode (its access is in the fleet's server table; the console
// follows that server so its answer and its events reach the page). The workflow runs the fleet's
// MCP servers keep in its Redis are read through the same connection (workflow-runs.ts). BullMQ
// and ioredis are loaded only when a queue is configured.
import type { TaskQueue } from "../core/queue/client.js";
import type { FleetRequest } from "../core/queue/approvals.js";
import type { QueueSettings } from "../core/queue/settings.js";
import type { Attempt } from "../core/queue/attempts.js";
import type { ServerAccess } from "../core/queue/servers.js";
import { RedisRunStore } from "../core/workflows/redis-run-store.js";
import type { Servers } from "./servers.js";
import type { Store } from "./store.js";

/** Pending requests are read again this often, in case an event fell into a Redis restart. */
const RESYNC_MS = 15_000;
const LISTED = 100;

export interface QueueTaskRow {
  id: string;
  queue: string;
  state: string;
  title: string;
  enqueued_at: number;
  /** The turn's status once the task has an outcome (done, error, interrupted …), or running / blocked. */
  status?: string;
  worker?: string;
  session_id?: string;
  attempts: Array<Pick<Attempt, "n" | "worker" | "outcome" | "sessionId" | "server" | "reason" | "rerun"> & { reattached_to?: number }>;
}

export class ConsoleFleet {
  private queue?: TaskQueue;
  private timer?: NodeJS.Timeout;
  private stopEvents?: () => void;
  private runStore?: RedisRunStore;

  constructor(
    readonly settings: QueueSettings,
    private readonly store: Store,
    private readonly servers: Servers,
  ) {}

  async start(): Promise<void> {
    const { TaskQueue } = await import("../core/queue/client.js");
    const queue = (this.queue = new TaskQueue(this.settings));
    this.stopEvents = await queue.channel.listen((e) => {
      if (e.type === "asked") void this.asked({ taskId: e.taskId, server: e.server, worker: "", askedAt: Date.now(), request: e.request });
      else if (e.type === "answered") this.store.replied(e.requestId);
    });
    await this.resync();
    this.timer = setInterval(() => void this.resync().catch(() => undefined), RESYNC_MS);
    this.timer.unref();
  }

  /** The queue as the page shows it. */
  async view(): Promise<Record<string, unknown>> {
    const queue = this.queue!;
    const [status, rows] = await Promise.all([queue.status(), queue.list(LISTED)]);
    const tasks: QueueTaskRow[] = await Promise.all(
      rows.map(async (row) => {
        const read = await queue.read(row.id).catch(() => undefined);
        const attempts = read?.task.attempts ?? [];
        return {
          id: row.id,
          queue: row.queue,
          state: read?.task.state ?? row.state,
          title: row.title,
          enqueued_at: row.enqueuedAt,
          ...(read ? { status: read.status } : {}),
          ...((read?.task.worker ?? attempts.at(-1)?.worker) ? { worker: read?.task.worker ?? attempts.at(-1)!.worker } : {}),
          ...(read?.sessionId ? { session_id: read.sessionId } : {}),
          attempts: attempts.map((a) => ({
            n: a.n,
            worker: a.worker,
            outcome: a.outcome,
            ...(a.sessionId ? { sessionId: a.sessionId } : {}),
            ...(a.server ? { server: a.server } : {}),
            ...(a.reason ? { reason: a.reason } : {}),
            ...(a.rerun ? { rerun: a.rerun } : {}),
            ...(a.reattach ? { reattached_to: a.reattach.of } : {}),
          })),
        };
      }),
    );
    return { ...status, tasks };
  }

  /** The workflow runs kept in the fleet's Redis (where every MCP server with this queue keeps them). */
  runs(): RedisRunStore {
    return (this.runStore ??= new RedisRunStore(this.queue!));
  }

  /** How to reach an opencode server of the fleet (password included: never show it): `url`'s row, else any on record. */
  async serverAccess(url?: string): Promise<ServerAccess | undefined> {
    const named = url ? await this.queue!.server(url) : undefined;
    return named ?? (await this.queue!.servers())[0];
  }

  /** Takes a queued task off the queue, or has its worker interrupt it; answers what the task ended with. */
  async cancel(id: string): Promise<{ status: string; state: string; was_running: boolean }> {
    const r = await this.queue!.cancel(id);
    return { status: r.status, state: r.task.state, was_running: r.wasRunning };
  }

  private async asked(r: FleetRequest): Promise<void> {
    const access = await this.queue!.server(r.server).catch(() => undefined);
    this.servers.follow(r.server, access);
    this.store.asked({ ...r.request, server: r.server, asked_at: r.askedAt, task_id: r.taskId });
  }

  private async resync(): Promise<void> {
    const open = await this.queue!.pending();
    for (const r of open) if (!this.store.pending.has(r.request.id)) await this.asked(r);
    // Whatever the store holds of the fleet and Redis no longer lists was answered (or its task ended).
    const ids = new Set(open.map((r) => r.request.id));
    for (const [id, p] of this.store.pending) if (p.task_id !== undefined && !ids.has(id)) this.store.replied(id);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.stopEvents?.();
    await this.queue?.close();
  }
}
