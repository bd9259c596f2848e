// A check step: the step's commands run one after the other (governance/checks.ts, the checks
// of oc_delegate) in the directory of the work they check: the checked step's worktree, or the
// run's project directory. Every task of a fan-out is checked in its own directory. A task that
// ran in a worktree on a worker (fleet-repo.ts) is checked here in a checkout of its fetched branch.
import { failureMessage, runChecks, type CheckRun } from "../../governance/checks.js";
import type { CheckStep } from "../definition.js";
import type { RecordedTurn } from "../run-record.js";
import { fill, type TemplateValues } from "../template.js";
import { inCheckout } from "./fleet-repo.js";

export interface CheckOutcome {
  passed: boolean;
  checks: CheckRun[];
  /** What the agent step is told when it is sent back. */
  failure?: string;
}

export async function runCheckStep(
  step: CheckStep,
  checked: RecordedTurn[],
  values: TemplateValues,
  fallbackDir: string,
  round: number,
): Promise<CheckOutcome> {
  const commands = (Array.isArray(step.run) ? step.run : [step.run]).map((c) => fill(c, values));
  const timeoutMs = step.timeout_s ? step.timeout_s * 1000 : undefined;
  const checks: CheckRun[] = [];
  const fleet = [...new Set(checked.flatMap((t) => (t.worktree?.repo ? [t.worktree.head ?? t.worktree.base!] : [])))];
  for (const commit of fleet) checks.push(...(await inCheckout(fallbackDir, commit, (dir) => runChecks(commands, dir, round, timeoutMs))));
  const dirs = [...new Set(checked.filter((t) => !t.worktree?.repo).map((t) => t.worktree?.directory ?? t.directory ?? fallbackDir))];
  if (dirs.length === 0 && fleet.length === 0) dirs.push(fallbackDir);
  for (const dir of dirs) checks.push(...(await runChecks(commands, dir, round, timeoutMs)));
  const failed = checks.filter((c) => !c.passed);
  return failed.length === 0 ? { passed: true, checks } : { passed: false, checks, failure: failureMessage(failed, timeoutMs) };
}
