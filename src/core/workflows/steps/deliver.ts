// A deliver step: the delivered agent step's worktree branches merged into a target branch by the
// worktrees layer (in order; a conflict is reported and the target left as it was), or pushed to a
// remote as branches. A step that ran without a worktree has no branch: it is refused when the file
// is read (parse.ts), and here if its turns name none. Branches a worker pushed (fleet-repo.ts:
// fetched into the run's repository under their own names) are merged by the same merge, by name.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { UsageError } from "../../errors.js";
import { mergeInto } from "../../worktrees/merge.js";
import { repoOf } from "../../worktrees/repo.js";
import type { Worktrees } from "../../worktrees/worktrees.js";
import type { DeliverStep } from "../definition.js";
import type { RecordedTurn } from "../run-record.js";
import { fill, type TemplateValues } from "../template.js";

const run = promisify(execFile);

export async function deliver(
  step: DeliverStep,
  turns: RecordedTurn[],
  o: { directory: string; values: TemplateValues; worktrees?: Worktrees },
): Promise<Record<string, unknown>> {
  const branched = turns.filter((t) => t.worktree?.branch && t.sessionId);
  if (branched.length === 0) throw new UsageError(`step "${step.of}" left no branch to deliver: it must run with isolation "worktree" and change files.`);
  if (step.push) {
    const pushed: string[] = [];
    for (const t of branched) {
      const as = step.push.branch && branched.length === 1 ? fill(step.push.branch, o.values) : t.worktree!.branch!;
      await run("git", ["push", step.push.remote, `${t.worktree!.branch}:refs/heads/${as}`], { cwd: o.directory });
      pushed.push(as);
    }
    return { pushed, remote: step.push.remote };
  }
  const into = fill(step.merge_into!, o.values);
  const report = branched.every((t) => t.worktree!.repo) ? await mergeFetched(branched, into, o.directory) : await mergeLocal(branched, into, o.worktrees);
  const conflicts = report.outcomes.filter((x) => x.result === "conflict" || x.result === "missing");
  if (conflicts.length)
    throw new Error(
      `merging into ${into} left it as it was: ${conflicts.map((c) => `${c.branch} ${c.result}${c.files?.length ? ` (${c.files.join(", ")})` : ""}`).join("; ")}`,
    );
  return {
    into: report.into,
    before: report.before,
    after: report.after,
    outcomes: report.outcomes.map((x) => ({ branch: x.branch, result: x.result, commit: x.commit })),
  };
}

/** Worktree tasks of this machine: through the worktrees registry (each merge recorded on its row). */
async function mergeLocal(turns: RecordedTurn[], into: string, worktrees: Worktrees | undefined) {
  if (!worktrees) throw new UsageError("merge_into needs the conductor's worktrees (a Conductor with a stateDir).");
  return worktrees.merge(
    turns.map((t) => t.sessionId!),
    into,
  );
}

/** Branches the fleet's workers pushed, fetched into the run's repository: merged there by name. */
async function mergeFetched(turns: RecordedTurn[], into: string, directory: string) {
  const repo = await repoOf(directory);
  const items = turns.map((t) => ({ id: t.sessionId!, branch: t.worktree!.branch!, base: t.worktree!.base! }));
  return mergeInto(repo.commonDir, into, items, { createAt: items[0]!.base });
}
