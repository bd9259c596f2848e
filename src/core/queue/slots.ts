// Per-provider concurrency across the fleet: at most N tasks of one provider run at once, whatever
// worker they are on. Open-source BullMQ has no job groups (a BullMQ Pro feature), so each running
// task holds a slot in a sorted set per provider (taken in begin.ts), scored by its lease's expiry; a worker renews its
// leases with its heartbeat, so a killed worker's slots free themselves once the lease runs out.
import type { Redis } from "ioredis";
import type { FleetKeys } from "./names.js";

export const SLOT_LEASE_MS = 30_000;

const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
end
return 1
`;

export class ProviderSlots {
  private readonly held = new Map<string, string>(); // member -> provider

  constructor(
    private readonly redis: Redis,
    private readonly keys: FleetKeys,
  ) {}

  /** Sets the fleet-wide limits (`provider -> N`; 0 removes a limit). */
  async setLimits(limits: Record<string, number>): Promise<void> {
    for (const [provider, n] of Object.entries(limits)) {
      if (n > 0) await this.redis.hset(this.keys.limits, provider, String(n));
      else await this.redis.hdel(this.keys.limits, provider);
    }
  }

  async limits(): Promise<Record<string, number>> {
    const raw = await this.redis.hgetall(this.keys.limits);
    return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Number(v)]));
  }

  /** Running tasks per provider right now (live leases only). */
  async running(provider: string): Promise<number> {
    const [seconds, micros] = await this.redis.time();
    return this.redis.zcount(this.keys.slots(provider), Number(seconds) * 1000 + Math.floor(Number(micros) / 1000), "+inf");
  }

  /** Remembers a slot taken by beginAttempt (begin.ts), so the heartbeat renews it and release frees it. */
  hold(provider: string, member: string): void {
    this.held.set(member, provider);
  }

  async renewAll(): Promise<void> {
    for (const [member, provider] of this.held) await this.redis.eval(RENEW, 1, this.keys.slots(provider), member, String(SLOT_LEASE_MS));
  }

  async release(member: string): Promise<void> {
    const provider = this.held.get(member);
    if (provider === undefined) return;
    this.held.delete(member);
    await this.redis.zrem(this.keys.slots(provider), member);
  }
}
