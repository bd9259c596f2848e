// Worktree steps on the fleet. With a queue, an agent step with isolation "worktree" runs on a
// worker as a `repo` task (queue/repo.ts: a fresh worktree of the repository per attempt, its branch
// `conductor/<task-id>` pushed back by the worker) instead of a worktree and a private server here.
// The repository is the run directory's git remote `origin`, started at the branch checked out
// there (as the remote has it): the workers must reach that URL. The walker then fetches the pushed
// branch into the run's repository under the same name, so the checks, the review's diff and the
// delivery work on it here, where the run is walked, as they do on a local worktree's branch.
import { randomBytes } from "node:crypto";
import { readdir, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { isProcessAlive } from "../../../client/discovery/processes.js";
import { UsageError } from "../../errors.js";
import type { RepoOutcome } from "../../queue/outcome.js";
import type { RepoSource } from "../../queue/spec.js";
import { git, gitLine } from "../../worktrees/git.js";
import { repoOf } from "../../worktrees/repo.js";
import type { RecordedTurn } from "../run-record.js";

/** The remote the workers fetch a run's repository from. */
export const FLEET_REMOTE = "origin";

/** What the workers fetch for a worktree step of a run in `directory`: its `origin`, at its checked-out branch. */
export async function fleetRepo(directory: string, stepName: string): Promise<RepoSource & { ref: string }> {
  const repo = await repoOf(directory);
  const url = await gitLine(repo.root, ["remote", "get-url", FLEET_REMOTE]).catch(() => "");
  if (!url)
    throw new UsageError(
      `step "${stepName}" runs in a worktree on the fleet's workers, and they fetch the project from its git remote "${FLEET_REMOTE}": ${repo.root} has none. ` +
        `Add one the workers can reach (git remote add ${FLEET_REMOTE} URL) and push the branch to start from, or give the step isolation "shared".`,
    );
  return { url: reachable(url, repo.root), ref: repo.branch ?? repo.head, push: true };
}

/** A relative path remote (`../app.git`) made absolute: the worker resolves it in its own workspace otherwise. */
function reachable(url: string, root: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^[^/]+:/.test(url) || isAbsolute(url)) return url;
  return resolve(root, url);
}

/**
 * The turn of a fleet worktree task, as the run record keeps it: the worker's branch fetched into
 * the run's repository (same name), with its base and head, and the remote it came from. The
 * worker's own directory is left out: it is on the worker, and gone once the patch is collected.
 */
export async function landedTurn(turn: RecordedTurn, repo: RepoOutcome | undefined, directory: string): Promise<RecordedTurn> {
  if (!repo) return turn;
  if (repo.branch && repo.pushed === false)
    throw new Error(`the worker could not push ${repo.branch} to ${repo.url}: ${repo.pushError ?? "no reason given"} (session ${turn.sessionId ?? "none"})`);
  const { directory: _onTheWorker, ...rest } = turn;
  if (!repo.branch) return { ...rest, worktree: { base: repo.base, repo: repo.url } };
  const root = (await repoOf(directory)).root;
  await git(root, ["fetch", "--quiet", "--no-tags", repo.url, `+refs/heads/${repo.branch}:refs/heads/${repo.branch}`]);
  const head = await gitLine(root, ["rev-parse", "--verify", `refs/heads/${repo.branch}^{commit}`]);
  return { ...rest, worktree: { branch: repo.branch, base: repo.base, head, repo: repo.url } };
}

/**
 * Runs `fn` in a detached checkout of `commit` of the run's repository, at the place the run
 * directory has in it, and removes the checkout afterwards. It lies in the repository's git dir
 * (`conductor-checks/`), never in the user's work tree. Its name carries this machine and process,
 * so a check on the same machine removes what a killed walker left there first (a checkout of a
 * live walker, or of one on another machine sharing the volume, is never touched).
 */
export async function inCheckout<T>(directory: string, commit: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const repo = await repoOf(directory);
  const checks = join(repo.commonDir, "conductor-checks");
  await removeLeftCheckouts(repo.root, checks);
  const at = join(checks, `${checkoutOwner()}.${process.pid}.${commit.slice(0, 12)}-${randomBytes(4).toString("hex")}`);
  await git(repo.root, ["worktree", "add", "--quiet", "--detach", at, commit]);
  try {
    return await fn(repo.subdir ? join(at, repo.subdir) : at);
  } finally {
    await removeCheckout(repo.root, at);
  }
}

/** This machine in a checkout's name: its host name with anything but `[A-Za-z0-9-]` dropped. */
const checkoutOwner = () => hostname().replace(/[^A-Za-z0-9-]/g, "") || "host";

/** The checkouts in `checks` whose walker was a process of this machine that is gone. */
async function removeLeftCheckouts(root: string, checks: string): Promise<void> {
  const names = await readdir(checks).catch(() => [] as string[]);
  for (const name of names) {
    const [host, pid] = name.split(".");
    if (host !== checkoutOwner() || !pid || Number(pid) === process.pid || isProcessAlive(Number(pid))) continue;
    await removeCheckout(root, join(checks, name));
  }
  await git(root, ["worktree", "prune"]);
}

async function removeCheckout(root: string, at: string): Promise<void> {
  await git(root, ["worktree", "remove", "--force", at]).catch(() => rm(at, { recursive: true, force: true }));
}
