// Worktree tasks of one state dir: each task gets a detached worktree of its repository under the
// state dir (never inside the user's tree), a free CONDUCTOR_PORT and an optional setup; at its end
// the agent's changes are committed and a branch `conductor/<session id>` is made when something
// changed. The registry knows every worktree and branch made here, so a crash leaves nothing behind
// that a later start cannot clean up (cleanup.ts), and finished tasks' branches outlive their
// checkouts. The user's work tree, index and current branch are only read, except by a merge the
// caller asks for into their checked-out branch (merge.ts says how that lands).
import { randomBytes } from "node:crypto";
import { mkdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { quoted, UsageError } from "../errors.js";
import type { FileChange } from "../turns/summary.js";
import { addWorktree, commitWork, createBranch, deleteBranch, removeWorktree, untrackedPaths } from "./checkout.js";
import { cleanStale, reapFinished, type Cleanup } from "./cleanup.js";
import { changedFiles, patchOf, PATCH_MAX_CHARS, type Patch } from "./diff.js";
import { resolveCommit } from "./git.js";
import { mergeInto, type MergeItem, type MergeReport } from "./merge.js";
import { branchFor, ownedHere, WorktreeRegistry, type WorktreeRow } from "./registry.js";
import { repoOf } from "./repo.js";
import { taskPort } from "./ports.js";
import { runSetup, type SetupRun } from "./setup.js";

export const DEFAULT_WORKTREE_TTL_S = 3600;

export interface WorktreesOptions {
  stateDir: string;
  /** Seconds a finished task's checkout is kept (its branch stays until removed). Default 3600. */
  ttlS?: number;
}

export interface OpenOptions {
  /** The project directory (inside a git work tree). */
  directory: string;
  /** The commit to start from (a branch, tag or sha). Default: the directory's HEAD. */
  base?: string;
  /** A shell command run in the worktree before the agent starts (e.g. `npm ci`). */
  setup?: string;
  setupTimeoutMs?: number;
  /** The environment of setup (CONDUCTOR_PORT is added). */
  env?: NodeJS.ProcessEnv;
  title?: string;
}

/** A worktree made for a task, ready for its agent. */
export interface OpenWorktree {
  id: string;
  /** Where the task runs: the worktree, at the same place the directory has in the repository. */
  directory: string;
  /** The worktree's top level. */
  path: string;
  base: string;
  port: number;
  /** What the task's commands get in their environment. */
  env: { CONDUCTOR_PORT: string };
  setup?: SetupRun;
}

/** What a worktree task returns besides its turn: where the work is and what it changed. */
export interface WorktreeFacts {
  /** `conductor/<session id>`; absent when nothing changed (no branch is made then). */
  branch?: string;
  base: string;
  head: string;
  changed: boolean;
  files: FileChange[];
  /** The patch from base to head, cut at PATCH_PREVIEW_CHARS (the full one: `patch()`). */
  patch: string;
  patchTruncated?: boolean;
  /** The worktree (kept for the TTL after the task). */
  path: string;
  port: number;
  setup?: SetupRun;
}

export interface RemoveReport {
  sessionId: string;
  checkoutRemoved: boolean;
  branch?: string;
  /** `kept`: it has commits the task did not make (deleting it would lose them). */
  branchResult?: "deleted" | "kept" | "gone";
}

export class Worktrees {
  readonly registry: WorktreeRegistry;
  readonly ttlMs: number;
  private readonly ports = new Set<number>();
  private readonly setupPaths = new Map<string, string[]>();
  private ready: Promise<Cleanup> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: WorktreesOptions) {
    this.registry = new WorktreeRegistry(options.stateDir);
    this.ttlMs = (options.ttlS ?? DEFAULT_WORKTREE_TTL_S) * 1000;
  }

  /** Removes what dead conductors left (once per process), then keeps reaping finished checkouts past the TTL. */
  cleanStale(): Promise<Cleanup> {
    this.ready ??= cleanStale(this.registry, this.ttlMs).finally(() => this.startReaper());
    return this.ready;
  }

  /** Creates the task's worktree (and runs its setup); the registry row comes first, so a crash leaves nothing unlisted. */
  async open(o: OpenOptions): Promise<OpenWorktree> {
    await this.cleanStale();
    const repo = await repoOf(o.directory);
    const base = o.base === undefined ? repo.head : await resolveCommit(repo.commonDir, o.base);
    if (!base) throw new UsageError(`\`base\` ${quoted(o.base)} names no commit in the repository at ${quoted(repo.root)}.`);
    const id = `${slug(basename(repo.root))}-${randomBytes(4).toString("hex")}`;
    const path = join(this.registry.root, id);
    const port = await this.freshPort();
    const row: WorktreeRow = {
      id,
      state: "creating",
      repo: repo.commonDir,
      root: repo.root,
      path,
      subdir: repo.subdir,
      base,
      port,
      ...ownedHere(),
      createdAt: new Date().toISOString(),
      ...(o.title ? { title: o.title.slice(0, 200) } : {}),
    };
    await this.registry.add(row);
    try {
      await mkdir(this.registry.root, { recursive: true, mode: 0o700 });
      await addWorktree(repo.commonDir, path, base);
      const directory = repo.subdir ? join(path, repo.subdir) : path;
      // A directory the base does not hold (new and uncommitted in the user's tree) starts empty.
      await mkdir(directory, { recursive: true });
      const env = { CONDUCTOR_PORT: String(port) };
      const setup = o.setup === undefined ? undefined : await runSetup(o.setup, directory, { ...(o.env ?? process.env), ...env }, o.setupTimeoutMs);
      // What setup left untracked (a build output not in .gitignore) is not the agent's work.
      if (setup) this.setupPaths.set(id, await untrackedPaths(path));
      return { id, directory, path, base, port, env, ...(setup ? { setup } : {}) };
    } catch (error) {
      await this.discard(id).catch(() => undefined);
      throw error;
    }
  }

  /** Notes the task's session (its id names the branch). */
  async started(id: string, sessionId: string): Promise<void> {
    await this.registry.update(id, { state: "running", sessionId });
  }

  /** Commits the agent's work; makes the branch when something changed; returns what the task changed. */
  async finish(id: string, message: { title: string; task: string }): Promise<WorktreeFacts> {
    const row = await this.registry.get(id);
    if (!row?.sessionId) throw new Error(`The worktree ${id} has no session on record.`);
    const commit = await commitWork(row.path, row.base, commitMessage(row.sessionId, message), this.setupPaths.get(id));
    const branch = commit.changed ? branchFor(row.sessionId) : undefined;
    if (branch) await createBranch(row.repo, branch, commit.head);
    await this.registry.update(id, {
      state: "finished",
      head: commit.head,
      changed: commit.changed,
      finishedAt: new Date().toISOString(),
      ...(branch ? { branch } : {}),
    });
    this.setupPaths.delete(id);
    this.ports.delete(row.port);
    return this.facts({ ...row, head: commit.head, changed: commit.changed, ...(branch ? { branch } : {}) });
  }

  /** Removes a worktree that never got to a result (a failed setup or start). */
  async discard(id: string): Promise<void> {
    const row = await this.registry.get(id);
    this.setupPaths.delete(id);
    if (!row) return;
    this.ports.delete(row.port);
    await removeWorktree(row.repo, row.path);
    await this.registry.remove(id);
  }

  /** What a finished task's worktree holds, read from git. */
  async facts(row: WorktreeRow): Promise<WorktreeFacts> {
    const head = row.head ?? row.base;
    const [files, preview] = await Promise.all([changedFiles(row.repo, row.base, head), patchOf(row.repo, row.base, head)]);
    return {
      ...(row.branch ? { branch: row.branch } : {}),
      base: row.base,
      head,
      changed: row.changed ?? false,
      files,
      patch: preview.patch,
      ...(preview.truncated ? { patchTruncated: true } : {}),
      path: row.path,
      port: row.port,
    };
  }

  /** The task's row, or a clear error when the session is no worktree task of this state dir. */
  async task(sessionId: string): Promise<WorktreeRow> {
    // After a restart, what a killed conductor left is cleared before any task is looked at.
    await this.cleanStale();
    const row = await this.registry.bySession(sessionId);
    if (!row) throw new UsageError(`Session ${quoted(sessionId)} is not a worktree task (none is on record for it in this state dir).`, "sessions");
    return row;
  }

  /** The task's whole patch (up to PATCH_MAX_CHARS). */
  async patch(sessionId: string, maxChars = PATCH_MAX_CHARS): Promise<Patch & { base: string; head: string }> {
    const row = await this.task(sessionId);
    const head = row.head ?? row.base;
    return { ...(await patchOf(row.repo, row.base, head, maxChars)), base: row.base, head };
  }

  /**
   * Merges finished tasks' branches, in order, into `into` (default: the branch checked out where the
   * first task was started), recording each outcome on its row.
   */
  async merge(sessionIds: string[], into?: string): Promise<MergeReport & { unchanged: string[] }> {
    if (sessionIds.length === 0) throw new UsageError("Name at least one worktree task (its session id) to merge.");
    const rows = await Promise.all(sessionIds.map((id) => this.task(id)));
    const repo = rows[0]!.repo;
    const elsewhere = rows.find((r) => r.repo !== repo);
    if (elsewhere)
      throw new UsageError(
        `Session ${quoted(elsewhere.sessionId)} worked in another repository (${quoted(elsewhere.root)}): merge each repository's tasks on their own.`,
      );
    const unfinished = rows.find((r) => r.state !== "finished");
    if (unfinished) throw new UsageError(`Session ${quoted(unfinished.sessionId)} is still running: wait for it, then merge.`, "result");
    const target = into ?? (await currentBranch(rows[0]!.root));
    const items = (rs: WorktreeRow[]): MergeItem[] =>
      rs.flatMap((r) => (r.branch ? [{ id: r.sessionId!, branch: r.branch, base: r.base, ...(r.title ? { title: r.title } : {}) }] : []));
    const earlier = (await this.registry.read()).filter(
      (r) => r.repo === repo && r.merge?.into === target && r.merge.result !== "conflict" && !sessionIds.includes(r.sessionId ?? ""),
    );
    const report = await mergeInto(repo, target, items(rows), { createAt: rows[0]!.base, earlier: items(earlier) });
    const at = new Date().toISOString();
    for (const o of report.outcomes) {
      const row = rows.find((r) => r.sessionId === o.id)!;
      await this.registry.update(row.id, { merge: { into: target, result: o.result, at, ...pick(o) } });
    }
    return { ...report, unchanged: rows.filter((r) => !r.branch).map((r) => r.sessionId!) };
  }

  /** Removes a finished task's checkout and its branch (unless the branch has commits the task did not make). */
  async remove(sessionId: string, beforeRemove?: (row: WorktreeRow) => Promise<void> | undefined): Promise<RemoveReport> {
    const row = await this.task(sessionId);
    if (row.state !== "finished")
      throw new UsageError(`Session ${quoted(sessionId)} is still running: interrupt it or wait for it before removing its worktree.`, "result");
    let checkoutRemoved = false;
    if (!row.checkoutRemovedAt && (await exists(row.path))) {
      await beforeRemove?.(row);
      await removeWorktree(row.repo, row.path);
      checkoutRemoved = true;
    }
    const report: RemoveReport = { sessionId, checkoutRemoved };
    if (row.branch && row.head) {
      const result = await deleteBranch(row.repo, row.branch, row.head);
      Object.assign(report, { branch: row.branch, branchResult: result === "moved" ? "kept" : result });
      if (result === "moved") {
        await this.registry.update(row.id, { checkoutRemovedAt: new Date().toISOString() });
        return report;
      }
    }
    await this.registry.remove(row.id);
    return report;
  }

  /** Stops the reaper (the rows and branches stay for the next start). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private startReaper(): void {
    if (this.timer) return;
    const every = Math.max(1_000, Math.min(60_000, this.ttlMs / 4));
    this.timer = setInterval(() => void reapFinished(this.registry, this.ttlMs).catch(() => undefined), every);
    this.timer.unref();
  }

  /** A free port that no live worktree task (of any conductor on this state dir) holds. */
  private async freshPort(): Promise<number> {
    const rows = (await this.registry.read()).filter((r) => r.state !== "finished").map((r) => r.port);
    return taskPort((p) => !this.ports.has(p) && !rows.includes(p) && this.ports.add(p) !== undefined);
  }
}

function commitMessage(sessionId: string, m: { title: string; task: string }): string {
  const title = m.title.split("\n")[0]!.slice(0, 72) || "opencode-conductor task";
  const task = m.task.length > 2000 ? `${m.task.slice(0, 2000)}…` : m.task;
  return `${title}\n\n${task}\n\nopencode-conductor task, session ${sessionId}`;
}

async function currentBranch(root: string): Promise<string> {
  const repo = await repoOf(root);
  if (!repo.branch) throw new UsageError(`The checkout at ${quoted(root)} is on a detached HEAD: name the branch to merge into (\`into\`).`);
  return repo.branch;
}

function pick(o: { commit?: string; files?: string[]; with?: string[] }) {
  return { ...(o.commit ? { commit: o.commit } : {}), ...(o.files ? { files: o.files } : {}), ...(o.with ? { with: o.with } : {}) };
}

function slug(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9._-]+/g, "-")
      .replace(/^[-.]+/, "")
      .slice(0, 24) || "repo"
  );
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined;
}
