// The delegation ledger in the fleet's Redis (with OPENCODE_CONDUCTOR_QUEUE): every MCP server
// and library caller of the fleet reads the same records. A record is one JSON key, a request id a
// key set with NX (so it names one record fleet-wide), the newest an index sorted by creation.
// Changes are optimistic read-modify-writes (WATCH/MULTI) on a connection of their own, one at a
// time in this process. Keys expire with the queue's retention (OPENCODE_CONDUCTOR_QUEUE_TTL_S).
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { LedgerRecord } from "../ledger/record.js";
import { MAX_OPEN_MS, type LedgerStore } from "../ledger/store.js";
import { execAll } from "./multi.js";
import type { QueueConnection } from "./redis-connection.js";

const MAX_UPDATE_TRIES = 20;

export class RedisLedgerStore implements LedgerStore {
  readonly retentionMs: number;
  private readonly prefix: string;
  private writer?: Redis;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly conn: QueueConnection) {
    this.retentionMs = conn.settings.ttlS * 1000;
    this.prefix = `${conn.settings.prefix}:fleet:ledger`;
  }

  private key(id: string): string {
    return `${this.prefix}:${id}`;
  }

  private claimKey(requestId: string): string {
    return `${this.prefix}-request:${createHash("sha256").update(requestId).digest("hex")}`;
  }

  private get index(): string {
    return `${this.prefix}-index`;
  }

  /** Seconds the record's keys live: its retention once over, else as long as an open record is kept. */
  private ttlS(record: LedgerRecord): number {
    const ms = record.end ? this.retentionMs : Math.max(this.retentionMs, MAX_OPEN_MS);
    return Math.ceil(ms / 1000);
  }

  async create(record: LedgerRecord): Promise<{ record: LedgerRecord; created: boolean }> {
    await this.conn.reachable();
    const redis = this.conn.redis;
    const ttl = this.ttlS(record);
    // Index entries of records whose keys expired are trimmed in the same transaction (a failed trim is the create's failure, not lost).
    const oldest = Date.now() - Math.max(this.retentionMs, MAX_OPEN_MS);
    await execAll(
      redis
        .multi()
        .set(this.key(record.id), JSON.stringify(record), "EX", ttl)
        .zadd(this.index, Date.parse(record.createdAt), record.id)
        .zremrangebyscore(this.index, "-inf", oldest),
      "writing the delegation record",
    );
    if (record.requestId === undefined) return { record, created: true };
    const claim = this.claimKey(record.requestId);
    for (let attempt = 0; attempt < 3; attempt++) {
      if ((await redis.set(claim, record.id, "EX", ttl, "NX")) !== null) return { record, created: true };
      const heldBy = await redis.get(claim);
      const held = heldBy ? await this.get(heldBy) : undefined;
      if (held) {
        await redis.multi().del(this.key(record.id)).zrem(this.index, record.id).exec();
        return { record: held, created: false };
      }
      // The claim outlived its record (expired apart): free it, then claim again.
      if (heldBy) await redis.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0", 1, claim, heldBy);
    }
    throw new Error(`Could not claim request id ${JSON.stringify(record.requestId)} in Redis: its claim keeps changing.`);
  }

  async get(id: string): Promise<LedgerRecord | undefined> {
    await this.conn.reachable();
    const raw = await this.conn.redis.get(this.key(id));
    return raw ? (JSON.parse(raw) as LedgerRecord) : undefined;
  }

  update(id: string, change: (record: LedgerRecord) => LedgerRecord | undefined): Promise<LedgerRecord | undefined> {
    const run = this.chain.then(() => this.updateNow(id, change));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async updateNow(id: string, change: (record: LedgerRecord) => LedgerRecord | undefined): Promise<LedgerRecord | undefined> {
    await this.conn.reachable();
    this.writer ??= this.conn.redis.duplicate();
    const redis = this.writer;
    const key = this.key(id);
    for (let attempt = 0; attempt < MAX_UPDATE_TRIES; attempt++) {
      await redis.watch(key);
      const raw = await redis.get(key);
      if (!raw) {
        await redis.unwatch();
        return undefined;
      }
      const current = JSON.parse(raw) as LedgerRecord;
      const next = change(current);
      if (!next) {
        await redis.unwatch();
        return current;
      }
      const m = redis.multi().set(key, JSON.stringify(next), "EX", this.ttlS(next));
      if (next.requestId !== undefined) m.expire(this.claimKey(next.requestId), this.ttlS(next));
      // null: another process changed the record meanwhile; read it again.
      if ((await m.exec()) !== null) return next;
    }
    throw new Error(`Could not change delegation ${id} in Redis: it kept changing under ${MAX_UPDATE_TRIES} tries.`);
  }

  async remove(record: LedgerRecord): Promise<void> {
    await this.conn.reachable();
    const redis = this.conn.redis;
    await redis.multi().del(this.key(record.id)).zrem(this.index, record.id).exec();
    if (record.requestId !== undefined)
      await redis.eval(
        "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0",
        1,
        this.claimKey(record.requestId),
        record.id,
      );
  }

  async list(limit: number): Promise<LedgerRecord[]> {
    await this.conn.reachable();
    const ids = await this.conn.redis.zrevrange(this.index, 0, limit - 1);
    if (ids.length === 0) return [];
    const raws = await this.conn.redis.mget(ids.map((id) => this.key(id)));
    return raws.flatMap((raw) => (raw ? [JSON.parse(raw) as LedgerRecord] : []));
  }

  close(): void {
    this.writer?.disconnect();
    this.writer = undefined;
  }
}
