// What the fleet looks like now, for oc_status and `queue status` / `queue ls`: job counts per
// state on every queue, the live workers, the provider limits, and the newest tasks. Read-only.
// Split from client.ts.
import type { QueueConnection, TaskJob } from "./redis-connection.js";
import { readWorkers, type WorkerAdvert } from "./adverts.js";
import { WALK_QUEUE } from "./names.js";
import { redacted } from "./settings.js";
import { ProviderSlots } from "./slots.js";

export interface QueueCounts {
  waiting: number;
  active: number;
  completed: number;
  failed: number;
  delayed: number;
}

export interface QueueStatus {
  url: string;
  prefix: string;
  counts: QueueCounts;
  queues: Record<string, QueueCounts>;
  /** Walk jobs (detached workflow runs, queue `walks`): apart from the tasks' counts. */
  walks: QueueCounts;
  workers: WorkerAdvert[];
  limits: Record<string, number>;
  /** Running tasks per provider that has a limit (leased slots, slots.ts), with the limit. */
  slots: Record<string, { running: number; limit: number }>;
}

export interface QueuedTaskRow {
  id: string;
  queue: string;
  state: string;
  title: string;
  enqueuedAt: number;
}

/** Job counts per state over all the fleet's queues, the live workers and the provider limits. */
export async function queueStatus(conn: QueueConnection): Promise<QueueStatus> {
  await conn.reachable();
  const names = await conn.queueNames();
  const queues: Record<string, QueueCounts> = {};
  const counts: QueueCounts = { waiting: 0, active: 0, completed: 0, failed: 0, delayed: 0 };
  const countsOf = async (name: string): Promise<QueueCounts> => {
    const c = await conn.queue(name).getJobCounts("waiting", "active", "completed", "failed", "delayed", "prioritized");
    return {
      waiting: (c.waiting ?? 0) + (c.prioritized ?? 0),
      active: c.active ?? 0,
      completed: c.completed ?? 0,
      failed: c.failed ?? 0,
      delayed: c.delayed ?? 0,
    };
  };
  for (const name of names) {
    const row = await countsOf(name);
    queues[name] = row;
    for (const k of Object.keys(counts) as Array<keyof QueueCounts>) counts[k] += row[k];
  }
  const slots = new ProviderSlots(conn.redis, conn.keys);
  const limits = await slots.limits();
  const running = await Promise.all(Object.keys(limits).map(async (p) => [p, { running: await slots.running(p), limit: limits[p]! }] as const));
  return {
    url: redacted(conn.settings.url),
    prefix: conn.settings.prefix,
    counts,
    queues,
    walks: await countsOf(WALK_QUEUE),
    workers: await readWorkers(conn.redis, conn.keys),
    limits,
    slots: Object.fromEntries(running),
  };
}

/**
 * Every job waiting for a worker on every queue of the fleet, whatever BullMQ list holds it: `wait`
 * (a list), `prioritized` and `delayed` (sorted sets: a task back from its provider's limit waits
 * there). What the KEDA trigger scales on (`queue metrics`, deploy/k8s/scaledobject.yaml). Walk
 * jobs (detached workflow runs) are counted apart, in `walks`: they take no task slot, so the task
 * workers are not scaled on them; deploy/k8s/scaledjob/run-scaledjob.yaml scales a pod per run on them.
 */
export async function backlog(
  conn: QueueConnection,
): Promise<{ waiting: number; active: number; queues: Record<string, number>; walks: { waiting: number; active: number } }> {
  await conn.reachable();
  const queues: Record<string, number> = {};
  let waiting = 0;
  let active = 0;
  for (const name of await conn.queueNames()) {
    const c = await conn.queue(name).getJobCounts("wait", "prioritized", "delayed", "active");
    queues[name] = (c.wait ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0);
    waiting += queues[name];
    active += c.active ?? 0;
  }
  const w = await conn.queue(WALK_QUEUE).getJobCounts("wait", "prioritized", "delayed", "active");
  const walks = { waiting: (w.wait ?? 0) + (w.prioritized ?? 0) + (w.delayed ?? 0), active: w.active ?? 0 };
  return { waiting, active, queues, walks };
}

/** The newest tasks of every queue (for `queue ls`). */
export async function listTasks(conn: QueueConnection, limit = 50): Promise<QueuedTaskRow[]> {
  const rows: QueuedTaskRow[] = [];
  for (const name of await conn.queueNames()) {
    const jobs = (await conn.queue(name).getJobs(["active", "waiting", "prioritized", "delayed", "completed", "failed"], 0, limit - 1, false)) as TaskJob[];
    for (const job of jobs) {
      if (!job?.id) continue;
      const state = await job.getState();
      rows.push({ id: job.id, queue: name, state, title: job.data.title ?? job.data.task.split("\n")[0]!.slice(0, 60), enqueuedAt: job.timestamp });
    }
  }
  return rows.sort((a, b) => b.enqueuedAt - a.enqueuedAt).slice(0, limit);
}
