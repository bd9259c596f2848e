// What surrounds a delegated turn when the caller asks for governance: a budget watching the spend
// from before the prompt until the turn settles, and the gate loop of checks after it. Kept apart
// from delegate.ts, which only supplies "run a turn (the task, or a follow-up message)".
import { Budget, type BudgetCaps, type BudgetTotals } from "./budget.js";
import type { CheckRun } from "./checks.js";
import type { CoreContext } from "../context.js";
import { gate } from "./gate.js";
import type { TurnSummary } from "../turns/summary.js";
import { runningWatch } from "../turns/kept-watches.js";
import type { RunTurnOptions } from "../turns/turn.js";

export interface GovernOptions extends BudgetCaps {
  /** Shell commands that must pass after the turn (run in the task's directory); see gate.ts. */
  checks?: string[];
  /** Check runs at most (default 3). */
  maxRounds?: number;
  /** Per check (default 300 s). */
  checkTimeoutMs?: number;
  /** Environment of the checks; default this process's, minus the conductor's secrets. */
  checkEnv?: NodeJS.ProcessEnv;
  /** A budget shared with other tasks (a parallel batch), used instead of maxTokens/maxCostUsd. */
  budget?: Budget;
}

export type GovernedSummary = TurnSummary & { checks?: CheckRun[]; budget?: BudgetTotals };

/** `turn(undefined)` runs the task; `turn(message)` sends a follow-up and waits for it. */
export type TurnRunner = (message: string | undefined, options: RunTurnOptions) => Promise<TurnSummary>;

export async function governed(ctx: CoreContext, sessionId: string, o: GovernOptions & RunTurnOptions, turn: TurnRunner): Promise<GovernedSummary> {
  const budget = o.budget ?? (await Budget.start(ctx, o));
  if (!budget && !o.checks?.length) return turn(undefined, o);
  if (budget?.exceeded) return { sessionId, status: "budget_exceeded", answer: "", budget: budget.totals };
  budget?.track(sessionId, ctx.engine);
  const release = budget && (o.budget ? budget.hold() : () => budget.release());
  const deadline = o.timeoutMs === undefined ? undefined : Date.now() + o.timeoutMs;
  try {
    let summary: GovernedSummary = await turn(undefined, o);
    if (o.checks?.length) {
      const cwd = ctx.engine.directory ?? (await ctx.engine.getSession(sessionId)).directory;
      const stop = () => budget?.exceeded === true || o.signal?.aborted === true;
      const left = () => (deadline === undefined ? undefined : Math.max(0, deadline - Date.now()));
      summary = await gate(summary, { checks: o.checks, maxRounds: o.maxRounds, checkTimeoutMs: o.checkTimeoutMs, cwd, stop, env: o.checkEnv }, (message) =>
        turn(message, { ...o, fresh: false, wait: true, timeoutMs: left() }),
      );
    }
    return budget ? budget.apply(summary) : summary;
  } finally {
    // A turn still running keeps its budget until it settles.
    const watch = release && runningWatch(ctx, sessionId);
    if (watch) watch.onSettled(release);
    else release?.();
  }
}
