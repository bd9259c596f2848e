// A review step: a second agent (its own agent and model, read-only) reads what the reviewed step
// changed and answers approve or request_changes with comments, in a JSON block the conductor
// parses (verdict.ts). Like an agent step it runs under the ledger with a request id per round,
// so a resume re-attaches to a review that was running. When the reviewed step ran in worktrees,
// the reviewer gets a worktree of its own (at the reviewed branch's head when there is one branch)
// on a server of its own: it reads the change's files, and the read-only rules are that server's
// (a 2.x server before 2.0.26 takes no rules per session, only in its config). When the reviewed
// step ran in worktrees on the fleet's workers, the reviewer is a `repo` task too, on a worker, in
// a fresh worktree of the reviewed branch (nothing pushed), held read-only by session rules.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { PlacementHost } from "../../placement/host.js";
import { startTask } from "../../placement/run.js";
import type { ReviewStep } from "../definition.js";
import type { Attempt, RecordedTurn, Verdict } from "../run-record.js";
import { fill, type TemplateValues } from "../template.js";
import { recordedTurn } from "./agent.js";
import { parseVerdict, VERDICT_FORMAT } from "./verdict.js";

const run = promisify(execFile);
/** Diff text given to the reviewer at most; past it the reviewer is told to read the files. */
const MAX_DIFF = 40_000;

export interface ReviewOutcome {
  turn: RecordedTurn;
  verdict?: Verdict;
}

export async function runReview(
  host: PlacementHost,
  step: ReviewStep,
  attempt: Attempt,
  reviewed: RecordedTurn[],
  values: TemplateValues,
  directory: string,
  signal?: AbortSignal,
): Promise<ReviewOutcome> {
  const diff = await diffOf(reviewed, directory);
  const branches = reviewed.flatMap((t) => (t.worktree?.head ? [t.worktree.head] : []));
  const onFleet = reviewed.find((t) => t.worktree?.repo);
  const fleetRefs = reviewed.flatMap((t) => (t.worktree?.repo ? [t.worktree.branch ?? t.worktree.base!] : []));
  const where = onFleet
    ? { repo: { url: onFleet.worktree!.repo!, ref: fleetRefs.length === 1 ? fleetRefs[0]! : onFleet.worktree!.base!, push: false } }
    : { directory, ...(branches.length ? { isolation: "worktree" as const, ...(branches.length === 1 ? { base: branches[0] } : {}) } : {}) };
  const ask = step.prompt ? fill(step.prompt, values) : "Review this change for correctness, tests and clarity.";
  const task = `${ask}\n\nThe change (step "${step.of}"):\n${diff}\n\n${VERDICT_FORMAT}`;
  const result = await startTask(host, {
    task,
    title: `${step.name}: review of ${step.of}`,
    permissions: "readonly",
    ...where,
    ...(step.model ? { model: step.model } : {}),
    ...(step.agent ? { agent: step.agent } : {}),
    ...(step.timeout_s ? { timeoutMs: step.timeout_s * 1000 } : {}),
    ...(signal ? { signal } : {}),
    requestId: attempt.requestId!,
    origin: "workflow",
  }).result;
  const turn = recordedTurn(result);
  return { turn, ...(result.status === "done" ? { verdict: parseVerdict(result.answer) } : {}) };
}

/** What the reviewed tasks changed: each worktree branch against its base, else the project's uncommitted changes. */
async function diffOf(turns: RecordedTurn[], directory: string): Promise<string> {
  const parts: string[] = [];
  for (const t of turns) {
    const wt = t.worktree;
    const args = wt?.base && (wt.branch ?? wt.head) ? ["diff", `${wt.base}..${wt.branch ?? wt.head}`] : ["diff", "HEAD"];
    const text = await git(args, directory);
    const untracked = wt ? "" : await git(["ls-files", "--others", "--exclude-standard"], directory);
    parts.push([text.trim(), untracked.trim() && `New files not yet in git:\n${untracked.trim()}`].filter(Boolean).join("\n") || "(no change recorded in git)");
  }
  const all = parts.join("\n\n");
  return all.length > MAX_DIFF ? `${all.slice(0, MAX_DIFF)}\n… (${all.length - MAX_DIFF} more characters: read the files themselves)` : all;
}

async function git(args: string[], cwd: string): Promise<string> {
  try {
    return (await run("git", args, { cwd, maxBuffer: 8 * 1024 * 1024 })).stdout;
  } catch (error) {
    return `(git ${args.join(" ")} failed: ${(error as Error).message.split("\n")[0]})`;
  }
}
