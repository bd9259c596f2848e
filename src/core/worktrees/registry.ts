// $STATE_DIR/worktrees.json: one row per worktree task, written before its worktree exists and kept
// while its branch does, so everything the conductor made in a repository is accounted for: after
// a crash, a later start finds the rows of dead owners and removes what they left (cleanup.ts).
// Several conductors may share the file, so each change is a locked read-modify-write (file-lock.ts).
import { join } from "node:path";
import { processStartTime } from "../../client/discovery/processes.js";
import { takeLock } from "../file-lock.js";
import { ensureStateDir, readJson, writeJsonAtomic } from "../state-dir.js";
import type { MergeResult } from "./merge.js";

/** creating: the worktree is being made or set up; running: the agent works in it; finished: its work is committed. */
export type WorktreeState = "creating" | "running" | "finished";

export interface MergeRecord {
  into: string;
  result: MergeResult;
  /** The target's commit after the merge. */
  commit?: string;
  files?: string[];
  with?: string[];
  at: string;
}

export interface WorktreeRow {
  /** The worktree's name (its folder under the state dir). */
  id: string;
  state: WorktreeState;
  /** The repository's shared git dir. */
  repo: string;
  /** The user's checkout the task was started from. */
  root: string;
  /** The worktree's top level. */
  path: string;
  /** Where in the repository the task runs ("" at the top). */
  subdir: string;
  /** The commit the worktree started from. */
  base: string;
  /** The task's CONDUCTOR_PORT. */
  port: number;
  ownerPid: number;
  /** Linux start time of the owner, to tell a reused pid from it. */
  ownerStartTime?: number;
  createdAt: string;
  title?: string;
  /** The task's session, once it exists; also the task's id in the branch name. */
  sessionId?: string;
  /** `conductor/<session id>`, once the work is committed and something changed. */
  branch?: string;
  head?: string;
  changed?: boolean;
  finishedAt?: string;
  /** The checkout is gone (removed after the TTL, or by hand); the branch stays. */
  checkoutRemovedAt?: string;
  /** The last merge of the branch. */
  merge?: MergeRecord;
}

interface RegistryFile {
  version: 1;
  worktrees: WorktreeRow[];
}

export class WorktreeRegistry {
  readonly path: string;
  /** Where the worktrees themselves go. */
  readonly root: string;
  private readonly lockPath: string;
  // Changes from this process are queued, so they never contend for the lock with each other.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly stateDir: string) {
    this.path = join(stateDir, "worktrees.json");
    this.lockPath = `${this.path}.lock`;
    this.root = join(stateDir, "worktrees");
  }

  async read(): Promise<WorktreeRow[]> {
    const file = await readJson<Partial<RegistryFile>>(this.path, { version: 1, worktrees: [] });
    return Array.isArray(file.worktrees) ? file.worktrees : [];
  }

  async get(id: string): Promise<WorktreeRow | undefined> {
    return (await this.read()).find((r) => r.id === id);
  }

  async bySession(sessionId: string): Promise<WorktreeRow | undefined> {
    return (await this.read()).find((r) => r.sessionId === sessionId);
  }

  async add(row: WorktreeRow): Promise<void> {
    await this.mutate((rows) => [...rows.filter((r) => r.id !== row.id), row]);
  }

  /** Changes the row of `id`; resolves with the new row, or undefined when there is none. */
  async update(id: string, change: Partial<WorktreeRow>): Promise<WorktreeRow | undefined> {
    let updated: WorktreeRow | undefined;
    await this.mutate((rows) => rows.map((r) => (r.id === id ? (updated = { ...r, ...change }) : r)));
    return updated;
  }

  async remove(id: string): Promise<void> {
    await this.mutate((rows) => rows.filter((r) => r.id !== id));
  }

  /** Runs `change` on the rows under the lock and writes the result. */
  mutate(change: (rows: WorktreeRow[]) => WorktreeRow[]): Promise<void> {
    const run = this.queue.then(async () => {
      await ensureStateDir(this.stateDir);
      const release = await takeLock(this.lockPath, this.path);
      try {
        await writeJsonAtomic(this.path, { version: 1, worktrees: change(await this.read()) } satisfies RegistryFile);
      } finally {
        await release();
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** Every task branch is named `conductor/<session id>`. */
export function branchFor(sessionId: string): string {
  return `conductor/${sessionId}`;
}

/** The owner fields of a row made by this process. */
export function ownedHere(): Pick<WorktreeRow, "ownerPid" | "ownerStartTime"> {
  const start = processStartTime(process.pid);
  return { ownerPid: process.pid, ...(start !== undefined ? { ownerStartTime: start } : {}) };
}
