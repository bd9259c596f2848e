// The repository a task's directory belongs to: its top level, the git dir its worktrees share, where
// the directory sits inside it, and what is checked out there now. Read only; nothing here writes.
import { realpath } from "node:fs/promises";
import { quoted, UsageError } from "../errors.js";
import { git, GitError } from "./git.js";

export interface Repo {
  /** Top level of the work tree holding the directory (the user's checkout). */
  root: string;
  /** The git dir shared by all of the repository's worktrees (identifies the repository). */
  commonDir: string;
  /** The directory relative to `root` ("" at the top), so a task can run at the same place in its worktree. */
  subdir: string;
  /** The commit checked out in `root`. */
  head: string;
  /** The branch checked out in `root`, or undefined when HEAD is detached. */
  branch?: string;
}

export async function repoOf(directory: string): Promise<Repo> {
  let lines: string[];
  try {
    const r = await git(directory, ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir", "--show-prefix"]);
    lines = r.stdout.split("\n");
  } catch (error) {
    if (error instanceof GitError && error.code !== null) {
      throw new UsageError(`${quoted(directory)} is not inside a git work tree: isolation "worktree" needs a git repository with at least one commit.`);
    }
    throw error;
  }
  const [root, commonDir, prefix] = lines;
  if (!root || !commonDir) throw new UsageError(`${quoted(directory)} is not inside a git work tree (git named no top level).`);
  const head = await git(root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { okCodes: [0, 1, 128] });
  if (head.code !== 0) throw new UsageError(`The repository at ${quoted(root)} has no commit yet: commit something first (a worktree starts from a commit).`);
  const branch = await git(root, ["symbolic-ref", "--quiet", "--short", "HEAD"], { okCodes: [0, 1, 128] });
  return {
    root: await realpath(root),
    commonDir: await realpath(commonDir),
    subdir: (prefix ?? "").replace(/\/$/, ""),
    head: head.stdout.trim(),
    ...(branch.code === 0 && branch.stdout.trim() ? { branch: branch.stdout.trim() } : {}),
  };
}

export interface CheckedOut {
  /** The work tree's top level. */
  path: string;
  /** Its HEAD commit. */
  head?: string;
  /** Its branch (full ref), when not detached. */
  ref?: string;
}

/** Every work tree of the repository (`git worktree list --porcelain -z`). */
export async function listWorktrees(cwd: string): Promise<CheckedOut[]> {
  const { stdout } = await git(cwd, ["worktree", "list", "--porcelain", "-z"]);
  const out: CheckedOut[] = [];
  let current: CheckedOut | undefined;
  for (const field of stdout.split("\0")) {
    if (field === "") {
      if (current) out.push(current);
      current = undefined;
      continue;
    }
    const space = field.indexOf(" ");
    const key = space === -1 ? field : field.slice(0, space);
    const value = space === -1 ? "" : field.slice(space + 1);
    if (key === "worktree") current = { path: value };
    else if (current && key === "HEAD") current.head = value;
    else if (current && key === "branch") current.ref = value;
  }
  if (current) out.push(current);
  return out;
}

/** The work tree that has `refs/heads/<branch>` checked out, if any (git allows one at a time). */
export async function checkoutOf(cwd: string, branch: string): Promise<CheckedOut | undefined> {
  return (await listWorktrees(cwd)).find((w) => w.ref === `refs/heads/${branch}`);
}
