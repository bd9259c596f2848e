// Each start of a task on a worker is an attempt, recorded in Redis by the worker as it happens, so
// a task handed on after its worker died says so: the first attempt stays `running` with no end,
// and the next worker marks it `lost` (with its session id, for a review) before it starts again.
import type { Redis } from "ioredis";
import type { FleetKeys } from "./names.js";

export type AttemptOutcome = "running" | "finished" | "failed" | "cancelled" | "lost";

export interface Attempt {
  n: number;
  worker: string;
  host: string;
  startedAt: string;
  /** The opencode session of this attempt (on that worker's opencode), once it exists. */
  sessionId?: string;
  /** Where it ran: the directory, or the fresh worktree of a repo task. */
  directory?: string;
  outcome: AttemptOutcome;
  endedAt?: string;
  /** Why it failed or was lost, in words. */
  reason?: string;
}

export class AttemptLog {
  constructor(
    private readonly redis: Redis,
    private readonly keys: FleetKeys,
    private readonly ttlS: number,
  ) {}

  async list(taskId: string): Promise<Attempt[]> {
    const rows = await this.redis.lrange(this.keys.attempts(taskId), 0, -1);
    return rows.map((r) => JSON.parse(r) as Attempt);
  }

  /**
   * Starts attempt n+1. An earlier attempt that never ended was lost with its worker (BullMQ gave
   * the job to this one after the lock expired): it is marked so, never taken for a result.
   */
  async start(taskId: string, who: { worker: string; host: string }, ttlS = this.ttlS): Promise<{ attempt: Attempt; earlier: Attempt[] }> {
    const key = this.keys.attempts(taskId);
    const earlier = await this.list(taskId);
    const now = new Date().toISOString();
    for (const a of earlier) {
      if (a.outcome !== "running") continue;
      a.outcome = "lost";
      a.endedAt = now;
      a.reason = `worker ${a.worker} on ${a.host} stopped answering (its lock on the job expired) before the task ended${a.sessionId ? `; its session ${a.sessionId} may hold partial work: review it on that worker's opencode` : ""}`;
      await this.redis.lset(key, a.n - 1, JSON.stringify(a));
    }
    const n = earlier.length + 1;
    const attempt: Attempt = { n, worker: who.worker, host: who.host, startedAt: now, outcome: "running" };
    await this.redis.multi().rpush(key, JSON.stringify(attempt)).expire(key, ttlS).exec();
    return { attempt, earlier };
  }

  async update(taskId: string, attempt: Attempt): Promise<void> {
    await this.redis.lset(this.keys.attempts(taskId), attempt.n - 1, JSON.stringify(attempt));
  }
}
