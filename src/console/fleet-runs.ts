// The workflow runs of the fleet's Redis as the console reads them, beside the state dir's: every
// read through the console's connection to the fleet (fleet.ts) bounded in time, because that
// connection waits through a Redis outage (a BullMQ client never gives up by itself), and the
// console must say the fleet's Redis does not answer rather than hang the page or the answer.
import { redacted } from "../core/queue/settings.js";
import type { WorkflowRun } from "../core/workflows/run-record.js";
import { RunStore } from "../core/workflows/run-store.js";
import type { ApiContext } from "./api.js";

/** How long one Redis read (or the sign-off's write) may take before the console says Redis does not answer. */
export const REDIS_MS = 15_000;

/** Where a run is kept, as the API names it. */
export type RunStoreName = "redis" | "state_dir";

export interface KeptRun {
  run: WorkflowRun;
  store: RunStoreName;
}

/** The fleet's Redis failed or did not answer in time; the message says which, and what was being done. */
export class RedisFailure extends Error {}

/** `work` on the fleet's Redis, or a RedisFailure once it fails or takes longer than REDIS_MS. */
export async function onRedis<T>(ctx: ApiContext, work: Promise<T>, what: string): Promise<T> {
  const where = `The fleet's Redis (${redacted(ctx.fleet!.settings.url)})`;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisFailure(`${where} did not answer within ${REDIS_MS / 1000} s ${what}: is it running?`)), REDIS_MS);
  });
  try {
    return await Promise.race([work, late]);
  } catch (error) {
    if (error instanceof RedisFailure) throw error;
    throw new RedisFailure(`${where} failed ${what}: ${(error as Error).message.slice(0, 300)}`, { cause: error });
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined); // a read that answers after the bound: nobody waits for it any more
  }
}

/** The newest runs of the fleet's Redis (none without a queue), or what kept the console from reading them. */
export async function fleetRuns(ctx: ApiContext, limit: number): Promise<{ runs?: WorkflowRun[]; error?: string }> {
  if (!ctx.fleet) return { runs: [] };
  return onRedis(ctx, ctx.fleet.runs().list(limit), "while listing the workflow runs").then(
    (runs) => ({ runs }),
    (error: Error) => ({ error: error.message }),
  );
}

/**
 * The run and its store: the fleet's Redis first (with a queue, the MCP servers keep their runs
 * there), then the state dir. When Redis fails and the state dir has no such run, the failure is
 * the answer: the run may well be in Redis.
 */
export async function findRun(ctx: ApiContext, id: string): Promise<KeptRun | undefined> {
  let failure: RedisFailure | undefined;
  if (ctx.fleet) {
    try {
      const run = await onRedis(ctx, ctx.fleet.runs().get(id), "while reading the workflow run");
      if (run) return { run, store: "redis" };
    } catch (error) {
      if (!(error instanceof RedisFailure)) throw error;
      failure = error;
    }
  }
  const run = await new RunStore(ctx.stateDir).get(id);
  if (run) return { run, store: "state_dir" };
  if (failure) throw failure;
  return undefined;
}

/** The fleet's opencode server a Redis run's steps ran on (a queued turn names it), else any server of the fleet on record. */
export async function fleetServerOf(ctx: ApiContext, run: WorkflowRun): Promise<{ url: string; username?: string; password?: string } | undefined> {
  const named = run.steps
    .flatMap((s) => s.attempts.flatMap((a) => a.turns ?? []))
    .map((t) => t.queued?.server)
    .filter((u): u is string => typeof u === "string")
    .at(-1);
  return onRedis(ctx, ctx.fleet!.serverAccess(named), "while looking up the fleet's opencode servers");
}
