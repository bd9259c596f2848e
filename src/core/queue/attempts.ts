// Each start of a task on a worker is an attempt, recorded in Redis by the worker as it happens, so
// a task handed on after its worker died says so: the first attempt stays `running` with no end,
// and the next worker marks it `lost` (with its session id, for a review) as it starts (begin.ts).
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

  async update(taskId: string, attempt: Attempt): Promise<void> {
    await this.redis.lset(this.keys.attempts(taskId), attempt.n - 1, JSON.stringify(attempt));
  }
}
