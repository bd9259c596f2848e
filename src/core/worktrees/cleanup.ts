// What is left when a conductor is gone, and checkouts past their time. At start: a task that was
// being set up or was running under a conductor that died (SIGKILL included) lost its agent (its
// opencode died with the conductor), so its worktree and any branch it got are removed with its
// row; a finished task keeps its row and branch. Folders under the worktree root that no row names
// (a crash between two steps) are removed too. Then, and every few minutes: a finished task's
// checkout is removed once it is older than the TTL; its branch stays, and a task without one
// (nothing changed) is forgotten.
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { isSameProcess } from "../../client/discovery/processes.js";
import { pruneWorktrees, removeWorktree } from "./checkout.js";
import { branchCommit, git } from "./git.js";
import { branchFor, type WorktreeRegistry, type WorktreeRow } from "./registry.js";

export interface Cleanup {
  /** Rows of dead conductors' unfinished tasks, removed with their worktrees and branches. */
  abandoned: string[];
  /** Finished tasks whose checkouts were removed (TTL, or repository gone). */
  reaped: string[];
  /** Folders under the worktree root no row named. */
  orphans: string[];
}

const exists = async (path: string) => (await stat(path).catch(() => undefined)) !== undefined;

export async function cleanStale(registry: WorktreeRegistry, ttlMs: number): Promise<Cleanup> {
  const rows = await registry.read();
  const abandoned: string[] = [];
  const repos = new Set<string>();
  for (const row of rows) {
    if (row.state === "finished" || isSameProcess(row.ownerPid, row.ownerStartTime)) continue;
    await removeTask(row);
    await registry.remove(row.id);
    abandoned.push(row.id);
    repos.add(row.repo);
  }
  const orphans = await removeOrphans(registry);
  const { reaped } = await reapFinished(registry, ttlMs);
  for (const repo of repos) if (await exists(repo)) await pruneWorktrees(repo);
  return { abandoned, reaped, orphans };
}

/** Removes finished tasks' checkouts past the TTL, and rows nothing is left of. */
export async function reapFinished(registry: WorktreeRegistry, ttlMs: number, now = Date.now()): Promise<Pick<Cleanup, "reaped">> {
  const reaped: string[] = [];
  for (const row of await registry.read()) {
    if (row.state !== "finished") continue;
    const repoGone = !(await exists(row.repo));
    const expired = !row.checkoutRemovedAt && now - Date.parse(row.finishedAt ?? row.createdAt) >= ttlMs;
    if (expired || repoGone) {
      if (repoGone) await rm(row.path, { recursive: true, force: true });
      else await removeWorktree(row.repo, row.path);
      reaped.push(row.id);
    }
    const branchLeft = !repoGone && row.branch !== undefined && (await branchCommit(row.repo, row.branch)) !== undefined;
    if ((expired || repoGone || row.checkoutRemovedAt) && !branchLeft) await registry.remove(row.id);
    else if (expired) await registry.update(row.id, { checkoutRemovedAt: new Date(now).toISOString() });
  }
  return { reaped };
}

/** An unfinished task's worktree and the branch its name would have (made just before a crash). */
async function removeTask(row: WorktreeRow): Promise<void> {
  if (!(await exists(row.repo))) return void (await rm(row.path, { recursive: true, force: true }));
  await removeWorktree(row.repo, row.path);
  const branch = row.branch ?? (row.sessionId ? branchFor(row.sessionId) : undefined);
  if (branch && (await branchCommit(row.repo, branch))) await git(row.repo, ["update-ref", "-d", `refs/heads/${branch}`]);
}

async function removeOrphans(registry: WorktreeRegistry): Promise<string[]> {
  const names = await readdir(registry.root).catch(() => [] as string[]);
  if (names.length === 0) return [];
  // Read after listing: a row written meanwhile names a folder another conductor is making.
  const listed = new Set((await registry.read()).map((r) => r.path));
  const orphans = names.filter((n) => !listed.has(join(registry.root, n)));
  for (const name of orphans) {
    const path = join(registry.root, name);
    const repo = await repositoryOf(path);
    await rm(path, { recursive: true, force: true });
    if (repo && (await exists(repo))) await pruneWorktrees(repo);
  }
  return orphans;
}

/** The shared git dir a worktree belongs to, from its `.git` file (`gitdir: <common>/worktrees/<name>`). */
async function repositoryOf(worktree: string): Promise<string | undefined> {
  const text = await readFile(join(worktree, ".git"), "utf8").catch(() => "");
  const gitdir = /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
  return gitdir ? dirname(dirname(resolve(worktree, gitdir))) : undefined;
}
