// Re-attach before re-prompt: a worker that takes over a task whose earlier attempt had a session
// does not prompt the model again before it knows what became of that session.
//
// 1. The earlier attempt's worker may still run it (it only lost its lock, e.g. in a Redis outage):
//    asked over the fleet's channel, it answers within HOLDER_ANSWER_MS, and then its outcome is
//    awaited (it records it when its attempt ends, outcome-record.ts) for as long as it keeps
//    answering.
// 2. Otherwise the session's server (the attempt's record says which) is asked about the session:
//    still running, it is followed to its end with the same core as any wait (the turn machine's
//    verdict, the task's checks after it); finished, its recorded end is the outcome.
// 3. Gone (opencode answers 404), never prompted, not answering within the bound, or its end not
//    known (`lost`): a new attempt, and the attempt's `rerun` says why.
import { existsSync } from "node:fs";
import { NotFoundError } from "../../client/errors.js";
import type { Conductor } from "../conductor.js";
import type { DelegateResult } from "../delegate.js";
import { governed } from "../governance/governed.js";
import { guardedEnv } from "../policy/guard-rails.js";
import { sessionScope } from "../sessions/scope.js";
import type { BlockedHandler } from "../turns/blocked.js";
import { runTurn, waitForSession } from "../turns/turn.js";
import type { TurnProgress } from "../turns/turn-progress.js";
import type { Attempt } from "./attempts.js";
import { publish, type FleetEvent, type FleetEvents } from "./fleet-events.js";
import type { FleetKeys } from "./names.js";
import { readOutcome } from "./outcome-record.js";
import type { TaskOutcome } from "./outcome.js";
import type { TaskSpec } from "./spec.js";
import type { Redis } from "ioredis";

/** How long a worker that still runs an attempt has to say so. */
export const HOLDER_ANSWER_MS = 2_000;
/** While it does, it is asked again this often (it may die before it records anything). */
const HOLDER_RECHECK_MS = 10_000;
/** Default bound on a session's server not answering before the task is run again. */
export const DEFAULT_REATTACH_MS = 30_000;
const PROBE_EVERY_MS = 2_000;
const PROBE_TIMEOUT_MS = 5_000;

export type Reattached =
  { kind: "recorded"; outcome: TaskOutcome } | { kind: "followed"; summary: DelegateResult; holder: Conductor } | { kind: "rerun"; reason: string };

export interface ReattachContext {
  taskId: string;
  spec: TaskSpec;
  /** The new attempt: `reattach.of`, and the session, server and directory it follows. */
  attempt: Attempt;
  earlier: Attempt[];
  worker: string;
  redis: Redis;
  keys: FleetKeys;
  events: FleetEvents;
  /** A conductor on the recorded server, or undefined when the fleet has no way to reach it on record. */
  conductorFor(url: string): Promise<Conductor | undefined>;
  /** The bound on a server that does not answer. */
  boundMs: number;
  timeoutMs: number;
  signal: AbortSignal;
  onProgress?: (p: TurnProgress) => void;
  onBlocked?: BlockedHandler;
  log(line: string): void;
}

export async function reattach(c: ReattachContext): Promise<Reattached> {
  const of = c.earlier.find((a) => a.n === c.attempt.reattach?.of);
  if (of && (await holderAnswers(c, of))) {
    c.log(`re-attach ${c.taskId}: worker ${of.worker} still runs attempt ${of.n}; waiting for its outcome`);
    const outcome = await holderOutcome(c, of);
    if (outcome) return { kind: "recorded", outcome };
  }
  const recorded = await readOutcome(c.redis, c.keys, c.taskId);
  if (recorded) return { kind: "recorded", outcome: recorded };
  const { sessionId, server, directory } = c.attempt;
  if (!sessionId || !server) return { kind: "rerun", reason: `attempt ${of?.n ?? "?"} recorded no session: nothing was prompted` };
  const holder = await c.conductorFor(server);
  if (!holder) return { kind: "rerun", reason: `attempt ${of?.n}'s opencode ${server} is not in the fleet's server table (no way to reach it on record)` };
  const probe = await probeSession(holder, sessionId, c.boundMs, c.signal);
  if (probe !== "there") return { kind: "rerun", reason: `attempt ${of?.n}'s session ${sessionId} ${probe}` };
  if ((c.spec.repo || c.spec.checks?.length) && (!directory || !existsSync(directory) || (c.spec.repo && !c.attempt.base)))
    return { kind: "rerun", reason: `attempt ${of?.n}'s directory ${directory ?? "(none)"} is not on this worker's machine (its checks or patch need it)` };
  const ctx = await sessionScope(holder, sessionId);
  if ((await ctx.engine.newestMessageId(sessionId)) === undefined)
    return { kind: "rerun", reason: `attempt ${of?.n}'s session ${sessionId} was never prompted (its worker stopped before the prompt)` };
  c.log(`re-attach ${c.taskId}: following ${sessionId} on ${server}`);
  const guard = c.spec.guard !== false;
  const summary = await governed(
    ctx,
    sessionId,
    {
      checks: c.spec.checks,
      maxRounds: c.spec.maxRounds,
      checkTimeoutMs: c.spec.checkTimeoutMs,
      ...(guard ? { checkEnv: guardedEnv(process.env) } : {}),
      // Counted from the re-attach on (what the session spent before is not seen here).
      maxTokens: c.spec.maxTokens,
      maxCostUsd: c.spec.maxCostUsd,
      detail: c.spec.detail,
      timeoutMs: c.timeoutMs,
      signal: c.signal,
      onProgress: c.onProgress,
      onBlocked: c.onBlocked,
      fresh: false,
    },
    (text, options) =>
      text === undefined
        ? waitForSession(ctx, sessionId, options)
        : runTurn(ctx, sessionId, () => ctx.engine.prompt(sessionId, { text }, () => undefined), options),
  );
  // The end is not known (its server went away under the wait): run it again rather than report nothing.
  if ((summary.status as string) === "lost" || (summary.status as string) === "unreachable")
    return { kind: "rerun", reason: `attempt ${of?.n}'s session ${sessionId} was followed but its end is not known (${summary.status})` };
  return { kind: "followed", summary: { ...summary, ...(ctx.engine.directory ? { directory: ctx.engine.directory } : {}) }, holder };
}

/** Asks the fleet whether a worker still runs attempt `a`; true when it says so in time. */
async function holderAnswers(c: ReattachContext, a: Attempt): Promise<boolean> {
  let answered!: () => void;
  const heard = new Promise<void>((resolve) => (answered = resolve));
  const off = await c.events.listen((e: FleetEvent) => {
    if (e.type === "held" && e.taskId === c.taskId && e.n === a.n) answered();
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await publish(c.redis, c.keys.events, { type: "holds", taskId: c.taskId, n: a.n, asker: c.worker });
    return await Promise.race([heard.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), HOLDER_ANSWER_MS)))]);
  } finally {
    clearTimeout(timer);
    off();
  }
}

/** The outcome the still-running holder records, or undefined once it released the attempt without one or stopped answering. */
async function holderOutcome(c: ReattachContext, a: Attempt): Promise<TaskOutcome | undefined> {
  let wake: () => void = () => undefined;
  let released = false;
  // Aborted (a cancel): stop waiting for the holder; it hears the cancel itself.
  c.signal.addEventListener("abort", () => wake(), { once: true });
  const off = await c.events.listen((e: FleetEvent) => {
    const ours = e.type === "outcome" ? e.taskId === c.taskId : e.type === "released" && e.taskId === c.taskId && e.n === a.n;
    if (!ours) return;
    if (e.type === "released") released = true;
    wake();
  });
  try {
    for (;;) {
      const outcome = await readOutcome(c.redis, c.keys, c.taskId);
      if (outcome) return outcome;
      if (released || c.signal.aborted) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, HOLDER_RECHECK_MS);
        wake = () => (clearTimeout(timer), resolve());
      });
      if (!released && !(await readOutcome(c.redis, c.keys, c.taskId)) && !(await holderAnswers(c, a))) return undefined;
    }
  } finally {
    off();
  }
}

/** "there", or what keeps the session from being followed, in words. */
async function probeSession(holder: Conductor, sessionId: string, boundMs: number, signal: AbortSignal): Promise<string> {
  const deadline = Date.now() + boundMs;
  let last: string;
  for (;;) {
    try {
      await Promise.race([
        holder.engine.getSession(sessionId),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${PROBE_TIMEOUT_MS / 1000} s`)), PROBE_TIMEOUT_MS).unref()),
      ]);
      return "there";
    } catch (error) {
      if (error instanceof NotFoundError) return `is gone from its opencode ${holder.engine.url} (404)`;
      last = (error as Error).message.slice(0, 200);
    }
    if (Date.now() >= deadline || signal.aborted)
      return `could not be read: its opencode ${holder.engine.url} did not answer within ${Math.round(boundMs / 1000)} s (${last})`;
    await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS).unref());
  }
}
