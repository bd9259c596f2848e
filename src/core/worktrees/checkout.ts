// A task's own checkout: a linked worktree at the base commit, detached (no branch exists until
// there is work to keep), the agent's changes committed at the end, and the branch created then.
// Repository-level commands run with the shared git dir as their cwd, never in the user's work tree.
import { rm } from "node:fs/promises";
import { branchCommit, CONDUCTOR_IDENTITY, git, gitLine } from "./git.js";

/**
 * git's worktree admin entries (`.git/worktrees/<name>`) are not safe against each other: a `prune`
 * while an `add` is writing its entry makes the add fail ("failed to read worktrees/…/commondir",
 * seen with twelve tasks starting and ending at once). So adds, removes and prunes of one repository
 * run one at a time in this process.
 */
const adminTurns = new Map<string, Promise<unknown>>();

function oneAtATime<T>(commonDir: string, work: () => Promise<T>): Promise<T> {
  const before = adminTurns.get(commonDir) ?? Promise.resolve();
  const turn = before.then(work, work);
  const settled = turn.catch(() => undefined);
  adminTurns.set(commonDir, settled);
  // Forget the repository once nothing waits behind this turn.
  void settled.then(() => {
    if (adminTurns.get(commonDir) === settled) adminTurns.delete(commonDir);
  });
  return turn;
}

/** Adds a detached worktree of `base` at `path` (which must not exist). */
export async function addWorktree(commonDir: string, path: string, base: string): Promise<void> {
  // Checking out a large repository takes a while on a loaded machine: the ceiling is generous.
  await oneAtATime(commonDir, () => git(commonDir, ["worktree", "add", "--detach", "--quiet", path, base], { timeoutMs: 10 * 60_000 }));
}

/** Removes the worktree at `path` and its admin entry; the files go even when git no longer knows it. */
export async function removeWorktree(commonDir: string, path: string): Promise<void> {
  // Twice --force: also when it has untracked files or is locked.
  await oneAtATime(commonDir, () => git(commonDir, ["worktree", "remove", "--force", "--force", path], { timeoutMs: 10 * 60_000 })).catch(() => undefined);
  await rm(path, { recursive: true, force: true });
  await pruneWorktrees(commonDir);
}

/** Drops admin entries of worktrees whose directory is gone. */
export async function pruneWorktrees(commonDir: string): Promise<void> {
  await oneAtATime(commonDir, () => git(commonDir, ["worktree", "prune"])).catch(() => undefined);
}

export interface Commit {
  /** The worktree's HEAD after the commit (the base when nothing changed and the agent made no commit). */
  head: string;
  /** The tree at `head` differs from the base's. */
  changed: boolean;
}

/**
 * Untracked paths git would add (ignored ones not), directories as `dir/`: taken after `setup`, so
 * what setup made (a build output not in .gitignore) is not counted as the agent's work.
 */
export async function untrackedPaths(worktree: string): Promise<string[]> {
  const { stdout } = await git(worktree, ["status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignored=no"], { timeoutMs: 10 * 60_000 });
  return stdout.split("\0").flatMap((entry) => (entry.startsWith("?? ") ? [entry.slice(3)] : []));
}

/**
 * Commits everything in the worktree (new files included; ignored ones and `exclude` not) on top of
 * its HEAD, which is the base or whatever the agent committed itself, and moves the worktree's HEAD there.
 */
export async function commitWork(worktree: string, base: string, message: string, exclude: readonly string[] = []): Promise<Commit> {
  const pathspecs = [".", ...exclude.map((p) => `:(exclude,literal)${p}`)].join("\0");
  await git(worktree, ["add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul"], { input: pathspecs, timeoutMs: 10 * 60_000 });
  const tree = await gitLine(worktree, ["write-tree"]);
  const head = await gitLine(worktree, ["rev-parse", "--verify", "HEAD^{commit}"]);
  const [headTree, baseTree] = await Promise.all([gitLine(worktree, ["rev-parse", `${head}^{tree}`]), gitLine(worktree, ["rev-parse", `${base}^{tree}`])]);
  let last = head;
  if (tree !== headTree) {
    last = await gitLine(worktree, ["commit-tree", "--no-gpg-sign", tree, "-p", head, "-m", message], { env: CONDUCTOR_IDENTITY });
    await git(worktree, ["update-ref", "--no-deref", "-m", "opencode-conductor: task commit", "HEAD", last, head]);
  }
  return { head: last, changed: tree !== baseTree };
}

/** Creates `refs/heads/<name>` at `commit`; fails when the branch exists already. */
export async function createBranch(commonDir: string, name: string, commit: string): Promise<void> {
  await git(commonDir, ["update-ref", "-m", "opencode-conductor: task branch", `refs/heads/${name}`, commit, ""]);
}

/** Deletes `refs/heads/<name>` if it still points at `commit`: `moved` (nothing deleted) when it has other commits now. */
export async function deleteBranch(commonDir: string, name: string, commit: string): Promise<"deleted" | "moved" | "gone"> {
  const now = await branchCommit(commonDir, name);
  if (now === undefined) return "gone";
  if (now !== commit) return "moved";
  const r = await git(commonDir, ["update-ref", "-d", `refs/heads/${name}`, commit], { okCodes: [0, 1, 128] });
  return r.code === 0 ? "deleted" : "moved";
}
