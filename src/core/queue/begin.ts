// One round trip when a worker takes a task, so the queue adds little to a task's start: in one
// Lua script, answer a task whose outcome is on record already (an attempt finished but BullMQ
// refused its completion: it is completed from the record, never run again), refuse a cancelled
// task, take a slot of its provider (unless the fleet's limit for it is reached), mark attempts that
// never ended as unreachable (their worker stopped answering: BullMQ handed the job on after its lock
// expired; what their session did is not known yet), and record the new attempt: a re-attach to the
// newest such attempt's session when it had one (reattach.ts decides), else a new run. Redis's
// clock decides slot expiry.
import type { Redis } from "ioredis";
import type { Attempt } from "./attempts.js";
import type { FleetKeys } from "./names.js";
import { readOutcome } from "./outcome-record.js";
import type { TaskOutcome } from "./outcome.js";
import { SLOT_LEASE_MS } from "./slots.js";

// KEYS: slots of the provider, limits hash, cancel flag, attempts list, outcome.
// ARGV: provider, task id, lease ms, the new attempt (JSON, without n), now (ISO), retention s.
const BEGIN = `
if redis.call('EXISTS', KEYS[5]) == 1 then return {2} end
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
local follow = nil
for i, row in ipairs(rows) do
  local a = cjson.decode(row)
  if a.outcome == 'running' then
    a.outcome = 'unreachable'
    a.endedAt = ARGV[5]
    a.reason = 'worker ' .. a.worker .. ' on ' .. a.host .. ' stopped answering (its lock on the job expired) before the task ended'
    if a.sessionId then
      a.reason = a.reason .. '; its session ' .. a.sessionId .. ' is followed by the next attempt'
      follow = a
    end
    rows[i] = cjson.encode(a)
    redis.call('LSET', KEYS[4], i - 1, rows[i])
  end
end
local attempt = cjson.decode(ARGV[4])
attempt.n = #rows + 1
if follow then
  attempt.reattach = { of = follow.n }
  attempt.sessionId = follow.sessionId
  attempt.server = follow.server
  attempt.directory = follow.directory
  attempt.base = follow.base
end
local row = cjson.encode(attempt)
redis.call('RPUSH', KEYS[4], row)
redis.call('EXPIRE', KEYS[4], tonumber(ARGV[6]))
table.insert(rows, row)
return {1, rows}
`;

export type Begin =
  { state: "recorded"; outcome: TaskOutcome } | { state: "cancelled" } | { state: "limited" } | { state: "started"; attempt: Attempt; earlier: Attempt[] };

export async function beginAttempt(
  redis: Redis,
  keys: FleetKeys,
  o: { provider: string; taskId: string; worker: string; host: string; retentionS: number },
): Promise<Begin> {
  const now = new Date().toISOString();
  const draft = { worker: o.worker, host: o.host, startedAt: now, outcome: "running" };
  const [code, rows] = (await redis.eval(
    BEGIN,
    5,
    keys.slots(o.provider),
    keys.limits,
    keys.cancel(o.taskId),
    keys.attempts(o.taskId),
    keys.outcome(o.taskId),
    o.provider,
    o.taskId,
    String(SLOT_LEASE_MS),
    JSON.stringify(draft),
    now,
    String(o.retentionS),
  )) as [number, string[]?];
  if (code === 2) {
    const outcome = await readOutcome(redis, keys, o.taskId);
    // Gone again between the two reads (its retention ran out): start as if it never was.
    return outcome ? { state: "recorded", outcome } : beginAttempt(redis, keys, o);
  }
  if (code === -1) return { state: "cancelled" };
  if (code === 0) return { state: "limited" };
  const all = (rows ?? []).map((r) => JSON.parse(r) as Attempt);
  return { state: "started", attempt: all.at(-1)!, earlier: all.slice(0, -1) };
}
