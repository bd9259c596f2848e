// The gate loop: after a turn ends `done`, run the checks; if one fails, send its output back into
// the same session and wait again, up to `maxRounds` check runs. The task is `done` only when every
// check passes, else `checks_failed`. A turn that does not end `done` (running, blocked, error,
// interrupted) stops the loop as it is: its checks were not run.
import { DEFAULT_MAX_ROUNDS, failureMessage, runChecks, type CheckRun } from "./checks.js";
import type { TurnSummary } from "../turns/summary.js";

export interface GateOptions {
  checks: string[];
  /** Check runs at most (default 3): round 1 follows the task's turn, each later one a fix turn. */
  maxRounds?: number;
  checkTimeoutMs?: number;
  /** Where the checks run: the task's directory. */
  cwd: string;
  /** Stop before another fix turn (e.g. the budget is spent). */
  stop?: () => boolean;
  /** Environment of the checks (e.g. the guard rails' stripped one for unattended work). */
  env?: NodeJS.ProcessEnv;
}

export async function gate(first: TurnSummary, o: GateOptions, fix: (message: string) => Promise<TurnSummary>): Promise<TurnSummary & { checks: CheckRun[] }> {
  const maxRounds = o.maxRounds ?? DEFAULT_MAX_ROUNDS;
  const runs: CheckRun[] = [];
  let summary = first;
  for (let round = 1; ; round++) {
    if (summary.status !== "done") return { ...summary, checks: runs };
    const results = await runChecks(o.checks, o.cwd, round, o.checkTimeoutMs, o.env);
    runs.push(...results);
    const failed = results.filter((r) => !r.passed);
    if (failed.length === 0) return { ...summary, checks: runs };
    if (round >= maxRounds || o.stop?.()) return { ...summary, status: "checks_failed", checks: runs };
    summary = mergeRounds(summary, await fix(failureMessage(failed, o.checkTimeoutMs)));
  }
}

/** The fix turn's summary, with tokens, cost, tools and files of the earlier rounds added. */
function mergeRounds(before: TurnSummary, after: TurnSummary): TurnSummary {
  const merged: TurnSummary = { ...after };
  if (before.tokens && after.tokens) {
    merged.tokens = { ...after.tokens };
    for (const k of Object.keys(merged.tokens) as Array<keyof typeof merged.tokens>) merged.tokens[k] += before.tokens[k];
  }
  if (before.cost !== undefined && after.cost !== undefined) merged.cost = before.cost + after.cost;
  if (before.tools && after.tools) merged.tools = [...before.tools, ...after.tools];
  if (before.files && after.files) merged.files = [...new Map([...before.files, ...after.files].map((f) => [f.path, f])).values()];
  return merged;
}
