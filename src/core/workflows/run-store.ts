// Workflow runs in the state dir: $STATE_DIR/workflows/<run id>.json, one file per run, written
// atomically (state-dir.ts) and changed by locked read-modify-writes (file-lock.ts), the same
// writers as the delegation ledger, so two processes on one state dir (a server and the one that
// replaces it after a crash, the CLI) never lose each other's changes.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { takeLock } from "../file-lock.js";
import { ensureStateDir, readJson, writeJsonAtomic } from "../state-dir.js";
import type { WorkflowRun } from "./run-record.js";
import type { RunRecords } from "./run-records.js";

export class RunStore implements RunRecords {
  readonly dir: string;

  get where(): string {
    return this.dir;
  }

  constructor(readonly stateDir: string) {
    this.dir = join(stateDir, "workflows");
  }

  private path(id: string): string {
    if (!/^wfr_[A-Za-z0-9_-]{1,64}$/.test(id)) throw new Error(`Not a workflow run id: ${JSON.stringify(id.slice(0, 80))}`);
    return join(this.dir, `${id}.json`);
  }

  async create(run: WorkflowRun): Promise<void> {
    try {
      await ensureStateDir(this.stateDir);
      await ensureStateDir(this.dir);
      await writeJsonAtomic(this.path(run.id), run);
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      throw new Error(
        `The workflow run cannot be written in ${this.dir} (${e.code ?? e.message}): make the state dir writable (OPENCODE_CONDUCTOR_STATE_DIR, or the Conductor's stateDir).`,
        { cause: error },
      );
    }
  }

  get(id: string): Promise<WorkflowRun | undefined> {
    return readJson<WorkflowRun | undefined>(this.path(id), undefined);
  }

  /** Changes a run under its lock; `change` answers the new run, or undefined to leave it. A failed write rejects. */
  async update(id: string, change: (run: WorkflowRun) => WorkflowRun | undefined): Promise<WorkflowRun | undefined> {
    const path = this.path(id);
    const release = await takeLock(`${path}.lock`, path);
    try {
      const current = await this.get(id);
      if (!current) return undefined;
      const next = change(structuredClone(current));
      if (!next) return current;
      next.updatedAt = new Date().toISOString();
      await writeJsonAtomic(path, next);
      return next;
    } finally {
      await release();
    }
  }

  /** Runs, newest first. */
  async list(limit = 50): Promise<WorkflowRun[]> {
    const names = await readdir(this.dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [] as string[];
      throw error;
    });
    const runs = await Promise.all(
      names.filter((n) => /^wfr_.*\.json$/.test(n)).map((n) => this.get(n.slice(0, -".json".length)).catch(() => undefined)), // a torn or foreign file: skip it
    );
    return runs
      .filter((r): r is WorkflowRun => r !== undefined && typeof r.id === "string")
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      .slice(0, limit);
  }
}
