// A finished attempt is never lost: the worker records the task's outcome in Redis in the same
// script that ends the attempt's row, before and apart from BullMQ's completion of the job. BullMQ
// refuses the completion of a worker that lost its lock (a Redis outage or a partition longer than
// the lock, `Missing lock for job … moveToFinished`); the job then stalls, and the worker that
// takes it next completes it from this record (begin.ts) instead of running it again. The first
// outcome recorded for a task stands: an attempt that ends later (two workers followed the same
// session) keeps its own row but answers the recorded outcome.
import type { Redis } from "ioredis";
import type { Attempt } from "./attempts.js";
import type { FleetKeys } from "./names.js";
import type { TaskOutcome } from "./outcome.js";

/** What is kept: the outcome without its attempts (the attempts list is their one copy). */
export type RecordedOutcome = Omit<TaskOutcome, "attempts">;

// KEYS: outcome, attempts list. ARGV: outcome JSON (without attempts), the attempt's final row,
// its n, retention s, the events channel, the event to publish.
const RECORD = `
local kept = redis.call('GET', KEYS[1])
if redis.call('LLEN', KEYS[2]) >= tonumber(ARGV[3]) then
  redis.call('LSET', KEYS[2], tonumber(ARGV[3]) - 1, ARGV[2])
end
if not kept then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[4]))
  redis.call('PUBLISH', ARGV[5], ARGV[6])
end
return {kept or false, redis.call('LRANGE', KEYS[2], 0, -1)}
`;

function outcomeOf(raw: string, rows: string[]): TaskOutcome {
  return { ...(JSON.parse(raw) as RecordedOutcome), attempts: rows.map((r) => JSON.parse(r) as Attempt) };
}

/** Records the attempt's end and, unless one is on record already, the task's outcome; answers the task's outcome. */
export async function recordOutcome(redis: Redis, keys: FleetKeys, outcome: TaskOutcome, attempt: Attempt, retentionS: number): Promise<TaskOutcome> {
  const { attempts: _, ...kept } = outcome;
  const raw = JSON.stringify(kept);
  const [earlier, rows] = (await redis.eval(
    RECORD,
    2,
    keys.outcome(outcome.taskId),
    keys.attempts(outcome.taskId),
    raw,
    JSON.stringify(attempt),
    String(attempt.n),
    String(retentionS),
    keys.events,
    JSON.stringify({ type: "outcome", taskId: outcome.taskId }),
  )) as [string | null, string[]];
  return outcomeOf(earlier ?? raw, rows);
}

/** The task's recorded outcome, if an attempt ended. */
export async function readOutcome(redis: Redis, keys: FleetKeys, taskId: string): Promise<TaskOutcome | undefined> {
  const [[, raw], [, rows]] = (await redis.multi().get(keys.outcome(taskId)).lrange(keys.attempts(taskId), 0, -1).exec()) as [
    [unknown, string | null],
    [unknown, string[]],
  ];
  return raw ? outcomeOf(raw, rows) : undefined;
}

// KEYS: outcome. ARGV: outcome JSON (without attempts), retention s, the events channel, the event to publish.
const RECORD_UNSTARTED = `
if redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[2]), 'NX') then
  redis.call('PUBLISH', ARGV[3], ARGV[4])
  return false
end
return redis.call('GET', KEYS[1])
`;

/**
 * Records the outcome of a task that ended before an attempt began (its batch's budget was spent),
 * before BullMQ completes the job as for any other: a caller that reads the task while BullMQ
 * completes it finds the outcome here. The first outcome recorded stands; answers the task's.
 */
export async function recordUnstarted(redis: Redis, keys: FleetKeys, outcome: TaskOutcome, retentionS: number): Promise<TaskOutcome> {
  const { attempts, ...kept } = outcome;
  const earlier = (await redis.eval(
    RECORD_UNSTARTED,
    1,
    keys.outcome(outcome.taskId),
    JSON.stringify(kept),
    String(retentionS),
    keys.events,
    JSON.stringify({ type: "outcome", taskId: outcome.taskId }),
  )) as string | null;
  return earlier ? { ...(JSON.parse(earlier) as RecordedOutcome), attempts } : outcome;
}
