// Workflow runs in the fleet's Redis (with OPENCODE_CONDUCTOR_QUEUE): a run is one JSON key, the
// newest an index sorted by creation, changes optimistic read-modify-writes, one at a time in this
// process: the new value is written only if the key still holds what was read (a compare-and-set
// script on the fleet's connection, so the store opens no connection of its own to close). An open run (walking, or waiting for a sign-off) is kept at least as
// long as an open delegation (7 days) or the queue's retention if longer; an ended one for the
// retention (OPENCODE_CONDUCTOR_QUEUE_TTL_S).
import type { Redis } from "ioredis";
import { MAX_OPEN_MS } from "../ledger/store.js";
import { execAll } from "../queue/multi.js";
import type { WorkflowRun } from "./run-record.js";
import type { RunRecords } from "./run-records.js";

const MAX_UPDATE_TRIES = 20;
const COMPARE_AND_SET = "if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('set', KEYS[1], ARGV[2], 'EX', ARGV[3]) return 1 end return 0";

/** What the store needs of the fleet's connection (the TaskQueue). */
export interface FleetRedis {
  readonly redis: Redis;
  readonly settings: { readonly prefix: string; readonly ttlS: number };
  reachable(): Promise<void>;
}

export class RedisRunStore implements RunRecords {
  readonly where = "the fleet's Redis";
  private readonly prefix: string;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly conn: FleetRedis) {
    this.prefix = `${conn.settings.prefix}:fleet:workflow-run`;
  }

  private key(id: string): string {
    if (!/^wfr_[A-Za-z0-9_-]{1,64}$/.test(id)) throw new Error(`Not a workflow run id: ${JSON.stringify(id.slice(0, 80))}`);
    return `${this.prefix}:${id}`;
  }

  private get index(): string {
    return `${this.prefix}-index`;
  }

  private ttlS(run: WorkflowRun): number {
    const retention = this.conn.settings.ttlS * 1000;
    return Math.ceil((run.end ? retention : Math.max(retention, MAX_OPEN_MS)) / 1000);
  }

  async create(run: WorkflowRun): Promise<void> {
    await this.conn.reachable();
    const redis = this.conn.redis;
    // Index entries of runs whose keys expired: dropped once they are older than any run is kept,
    // in the same transaction (a failed trim is the create's failure, not lost).
    const oldest = Date.now() - Math.max(this.conn.settings.ttlS * 1000, MAX_OPEN_MS);
    await execAll(
      redis
        .multi()
        .set(this.key(run.id), JSON.stringify(run), "EX", this.ttlS(run))
        .zadd(this.index, Date.parse(run.createdAt), run.id)
        .zremrangebyscore(this.index, "-inf", oldest),
      "writing the workflow run",
    );
  }

  async get(id: string): Promise<WorkflowRun | undefined> {
    await this.conn.reachable();
    const raw = await this.conn.redis.get(this.key(id));
    return raw ? (JSON.parse(raw) as WorkflowRun) : undefined;
  }

  update(id: string, change: (run: WorkflowRun) => WorkflowRun | undefined): Promise<WorkflowRun | undefined> {
    const next = this.chain.then(() => this.updateNow(id, change));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async updateNow(id: string, change: (run: WorkflowRun) => WorkflowRun | undefined): Promise<WorkflowRun | undefined> {
    await this.conn.reachable();
    const redis = this.conn.redis;
    const key = this.key(id);
    for (let attempt = 0; attempt < MAX_UPDATE_TRIES; attempt++) {
      const raw = await redis.get(key);
      if (!raw) return undefined;
      const current = JSON.parse(raw) as WorkflowRun;
      const next = change(structuredClone(current));
      if (!next) return current;
      next.updatedAt = new Date().toISOString();
      // 0: another process changed the run meanwhile; read it again and apply the change to that.
      if ((await redis.eval(COMPARE_AND_SET, 1, key, raw, JSON.stringify(next), String(this.ttlS(next)))) === 1) return next;
    }
    throw new Error(`Could not change workflow run ${id} in Redis: it kept changing under ${MAX_UPDATE_TRIES} tries.`);
  }

  async list(limit = 50): Promise<WorkflowRun[]> {
    await this.conn.reachable();
    const ids = await this.conn.redis.zrevrange(this.index, 0, limit - 1);
    if (ids.length === 0) return [];
    const raws = await this.conn.redis.mget(ids.map((id) => this.key(id)));
    return raws.flatMap((raw) => (raw ? [JSON.parse(raw) as WorkflowRun] : []));
  }
}
