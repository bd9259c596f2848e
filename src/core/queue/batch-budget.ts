// A budget over a whole batch on the fleet (`maxTokens` / `maxCostUsd` of oc_delegate_parallel):
// its tasks run on many workers, so the total is kept in Redis. Each worker's Budget reports the
// usage of its messages (a message's latest figure replaces its earlier one, in one script that
// also moves the totals), gets the batch's total back, and the worker that sees it pass a cap marks
// the batch spent and says so on the fleet's channel: every worker stops its tasks of the batch, and
// the tasks not started yet end `not_started` (BudgetExceeded), as in process.
import type { Redis } from "ioredis";
import type { SharedSpend } from "../governance/budget.js";
import { publish, type FleetEvents } from "./fleet-events.js";
import type { FleetKeys } from "./names.js";

export interface BatchBudget {
  batchId: string;
  maxTokens?: number;
  maxCostUsd?: number;
}

// KEYS: per-message spend hash, totals hash. ARGV: message id, tokens, cost, retention s.
const REPORT = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
local oldTokens, oldCost = 0, 0
if old then
  local sep = string.find(old, ' ')
  oldTokens = tonumber(string.sub(old, 1, sep - 1))
  oldCost = tonumber(string.sub(old, sep + 1))
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. ARGV[3])
redis.call('HINCRBY', KEYS[2], 'tokens', tonumber(ARGV[2]) - oldTokens)
redis.call('HINCRBYFLOAT', KEYS[2], 'cost', tonumber(ARGV[3]) - oldCost)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
return redis.call('HMGET', KEYS[2], 'tokens', 'cost', 'exceeded')
`;

type Totals = { tokens: number; cost: number; exceeded: boolean };

const totalsOf = ([tokens, cost, exceeded]: Array<string | null>): Totals => ({
  tokens: Number(tokens ?? 0),
  cost: Number(cost ?? 0),
  exceeded: exceeded === "1",
});

/** The batch's spend as a SharedSpend for the core's Budget. */
export function sharedSpend(redis: Redis, keys: FleetKeys, events: FleetEvents, batchId: string, retentionS: number): SharedSpend {
  const totals = keys.spendTotals(batchId);
  return {
    async report(messageId, tokens, cost) {
      const raw = (await redis.eval(REPORT, 2, keys.spend(batchId), totals, messageId, String(Math.round(tokens)), String(cost), String(retentionS))) as Array<
        string | null
      >;
      return totalsOf(raw);
    },
    read: () => readSpend(redis, keys, batchId),
    async exceed() {
      await redis.multi().hset(totals, "exceeded", "1").expire(totals, retentionS).exec();
      await publish(redis, keys.events, { type: "spent", batchId });
    },
    onExceeded: (f) => events.listen((e) => (e.type === "spent" && e.batchId === batchId ? f() : undefined)),
  };
}

/** The batch's spend now (zero before anything was spent). */
export async function readSpend(redis: Redis, keys: FleetKeys, batchId: string): Promise<Totals> {
  return totalsOf(await redis.hmget(keys.spendTotals(batchId), "tokens", "cost", "exceeded"));
}
