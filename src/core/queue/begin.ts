// One round trip when a worker takes a task, so the queue adds little to a task's start: in one
// Lua script, refuse a cancelled task, take a slot of its provider (unless the fleet's limit for it
// is reached), mark attempts that never ended as lost (their worker died: BullMQ handed the job on
// after its lock expired), and record the new attempt. Redis's clock decides slot expiry.
import type { Redis } from "ioredis";
import type { Attempt } from "./attempts.js";
import type { FleetKeys } from "./names.js";
import { SLOT_LEASE_MS } from "./slots.js";

// KEYS: slots of the provider, limits hash, cancel flag, attempts list.
// ARGV: provider, task id, lease ms, the new attempt (JSON, without n), now (ISO), retention s.
const BEGIN = `
if redis.call('EXISTS', KEYS[3]) == 1 then return {-1} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  local limit = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
  if limit > 0 and redis.call('ZCARD', KEYS[1]) >= limit then return {0} end
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
local rows = redis.call('LRANGE', KEYS[4], 0, -1)
for i, row in ipairs(rows) do
  local a = cjson.decode(row)
  if a.outcome == 'running' then
    a.outcome = 'lost'
    a.endedAt = ARGV[5]
    a.reason = 'worker ' .. a.worker .. ' on ' .. a.host .. ' stopped answering (its lock on the job expired) before the task ended'
    if a.sessionId then a.reason = a.reason .. '; its session ' .. a.sessionId .. " may hold partial work: review it on that worker's opencode" end
    rows[i] = cjson.encode(a)
    redis.call('LSET', KEYS[4], i - 1, rows[i])
  end
end
local attempt = cjson.decode(ARGV[4])
attempt.n = #rows + 1
local row = cjson.encode(attempt)
redis.call('RPUSH', KEYS[4], row)
redis.call('EXPIRE', KEYS[4], tonumber(ARGV[6]))
table.insert(rows, row)
return {1, rows}
`;

export type Begin = { state: "cancelled" } | { state: "limited" } | { state: "started"; attempt: Attempt; earlier: Attempt[] };

export async function beginAttempt(
  redis: Redis,
  keys: FleetKeys,
  o: { provider: string; taskId: string; worker: string; host: string; retentionS: number },
): Promise<Begin> {
  const now = new Date().toISOString();
  const draft = { worker: o.worker, host: o.host, startedAt: now, outcome: "running" };
  const [code, rows] = (await redis.eval(
    BEGIN,
    4,
    keys.slots(o.provider),
    keys.limits,
    keys.cancel(o.taskId),
    keys.attempts(o.taskId),
    o.provider,
    o.taskId,
    String(SLOT_LEASE_MS),
    JSON.stringify(draft),
    now,
    String(o.retentionS),
  )) as [number, string[]?];
  if (code === -1) return { state: "cancelled" };
  if (code === 0) return { state: "limited" };
  const all = (rows ?? []).map((r) => JSON.parse(r) as Attempt);
  return { state: "started", attempt: all.at(-1)!, earlier: all.slice(0, -1) };
}
