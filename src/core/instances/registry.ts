// $STATE_DIR/instances.json: one row per private opencode server a conductor started, with what is
// needed to reach it again (url, password), to watch it (sessions) and to clean up after a crash
// (pid, conductorPid). The format is a documented contract: docs/instances.md.
//
// Several conductors (one per MCP client) may share the file, so every change is a locked
// read-modify-write under a lock file (file-lock.ts). One shared file rather than
// one per conductor, because start-up cleanup must see the rows of conductors that died.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isOpencodeProcess, isProcessAlive, isSameProcess, processArgv } from "../../client/discovery/processes.js";
import type { FallbackRecord } from "../turns/summary.js";
import { takeLock } from "../file-lock.js";
import { ensureStateDir, readJson, writeJsonAtomic } from "../state-dir.js";

export interface InstanceSession {
  id: string;
  title: string;
  /** `provider/model` the session runs with (the last one after fallbacks). */
  model: string;
  /** ISO time. */
  startedAt: string;
  fallbacks: FallbackRecord[];
}

export interface InstanceRow {
  runtime: "opencode serve";
  sandbox: "none" | "srt";
  port: number;
  pid: number;
  /** The conductor process that started (and owns) the instance. */
  conductorPid: number;
  /** Linux start time of the conductor (clock ticks since boot), to tell a reused pid from it. */
  conductorStartTime?: number;
  directory: string;
  /** ISO time. */
  startedAt: string;
  /** ISO time of the last use (a task started or a session was touched). */
  lastUsedAt?: string;
  /** Basic-auth password (user `opencode`). Never shown by a tool. */
  password: string;
  url: string;
  sessions: InstanceSession[];
}

export type PublicInstanceRow = Omit<InstanceRow, "password">;

interface RegistryFile {
  version: 1;
  instances: InstanceRow[];
}

export interface StaleCleanup {
  /** Rows removed (without passwords). */
  removed: PublicInstanceRow[];
  /** Instance pids that were still running and were stopped. */
  killed: number[];
}

export interface RegistryOptions {
  /** Give up taking the lock after this long (default 10 s). */
  lockTimeoutMs?: number;
  /** A lock older than this is considered abandoned (default 5 s). */
  staleLockMs?: number;
}

export function withoutPassword(row: InstanceRow): PublicInstanceRow {
  const { password: _password, ...rest } = row;
  return rest;
}

export class InstanceRegistry {
  readonly path: string;
  private readonly lockPath: string;
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;
  // Changes from this process are queued, so they never contend for the lock with each other.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly stateDir: string,
    options: RegistryOptions = {},
  ) {
    this.path = join(stateDir, "instances.json");
    this.lockPath = `${this.path}.lock`;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
    this.staleLockMs = options.staleLockMs ?? 5_000;
  }

  /** Every row, passwords included (for this process's own use only). */
  async read(): Promise<InstanceRow[]> {
    const file = await readJson<Partial<RegistryFile>>(this.path, { version: 1, instances: [] });
    return Array.isArray(file.instances) ? file.instances : [];
  }

  /** Every row without its password: what may be shown. */
  async list(): Promise<PublicInstanceRow[]> {
    return (await this.read()).map(withoutPassword);
  }

  async add(row: InstanceRow): Promise<void> {
    await this.mutate((rows) => [...rows.filter((r) => r.pid !== row.pid), row]);
  }

  /** Changes the row of `pid`; resolves with the new row, or undefined when there is none. */
  async update(pid: number, change: Partial<InstanceRow> | ((row: InstanceRow) => InstanceRow)): Promise<InstanceRow | undefined> {
    let updated: InstanceRow | undefined;
    await this.mutate((rows) =>
      rows.map((r) => {
        if (r.pid !== pid) return r;
        updated = typeof change === "function" ? change(r) : { ...r, ...change };
        return updated;
      }),
    );
    return updated;
  }

  async remove(pid: number): Promise<InstanceRow | undefined> {
    let removed: InstanceRow | undefined;
    await this.mutate((rows) =>
      rows.filter((r) => {
        if (r.pid !== pid) return true;
        removed = r;
        return false;
      }),
    );
    return removed;
  }

  /** Adds (or replaces) a session of the instance `pid`. */
  addSession(pid: number, session: InstanceSession): Promise<InstanceRow | undefined> {
    return this.update(pid, (r) => ({ ...r, sessions: [...r.sessions.filter((s) => s.id !== session.id), session] }));
  }

  /** Changes one session of the instance `pid` (e.g. records a fallback). */
  updateSession(pid: number, sessionId: string, change: (session: InstanceSession) => InstanceSession): Promise<InstanceRow | undefined> {
    return this.update(pid, (r) => ({ ...r, sessions: r.sessions.map((s) => (s.id === sessionId ? change(s) : s)) }));
  }

  /**
   * Removes rows left by dead processes: the instance is gone, or its conductor is (then a still
   * running instance, checked to really be that opencode server, is stopped). Run at start-up, so a
   * conductor killed with SIGKILL leaves nothing behind after the next one starts.
   */
  async cleanStale(options: { graceMs?: number } = {}): Promise<StaleCleanup> {
    const stale: InstanceRow[] = [];
    await this.mutate((rows) =>
      rows.filter((r) => {
        const keep = isProcessAlive(r.pid) && conductorAlive(r);
        if (!keep) stale.push(r);
        return keep;
      }),
    );
    const killed: number[] = [];
    await Promise.all(
      stale.map(async (r) => {
        if (!isInstanceProcess(r)) return;
        await terminate(r.pid, options.graceMs ?? 5_000);
        killed.push(r.pid);
      }),
    );
    return { removed: stale.map(withoutPassword), killed };
  }

  /** A locked read-modify-write of the rows; the file is rewritten atomically with mode 0600. */
  mutate(change: (rows: InstanceRow[]) => InstanceRow[] | Promise<InstanceRow[]>): Promise<void> {
    const run = this.queue.then(async () => {
      await ensureStateDir(this.stateDir);
      const release = await this.lock();
      try {
        const next = await change(await this.read());
        await writeJsonAtomic(this.path, { version: 1, instances: next } satisfies RegistryFile, 0o600);
      } finally {
        await release();
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private lock(): Promise<() => Promise<void>> {
    return takeLock(this.lockPath, this.path, { timeoutMs: this.lockTimeoutMs, staleMs: this.staleLockMs });
  }
}

function conductorAlive(row: InstanceRow): boolean {
  return isSameProcess(row.conductorPid, row.conductorStartTime);
}

/** The row's process is still that opencode server (same binary, `serve --port PORT`). */
function isInstanceProcess(row: InstanceRow): boolean {
  if (!isOpencodeProcess(row.pid)) return false;
  const argv = processArgv(row.pid) ?? [];
  const at = argv.indexOf("--port");
  return argv.includes("serve") && (at < 0 || argv[at + 1] === String(row.port));
}

/** SIGTERM (to the process group when it leads one), then SIGKILL after `graceMs`. */
export async function terminate(pid: number, graceMs: number): Promise<void> {
  const group = leadsGroup(pid);
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(group ? -pid : pid, sig);
    } catch {
      // gone
    }
  };
  signal("SIGTERM");
  // Not our child (a dead conductor's), so no exit event: check every 50 ms.
  const deadline = Date.now() + graceMs;
  while (isProcessAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  signal("SIGKILL");
  const killDeadline = Date.now() + 2_000;
  while (isProcessAlive(pid) && Date.now() < killDeadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

function leadsGroup(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) === pid;
  } catch {
    return false;
  }
}
