// Private headless opencode servers, one per project directory, for unattended work
// (`isolation: "instance"`): started on a free port with a random password, the guard rails in
// their config and a credential-free environment, recorded in $STATE_DIR/instances.json, reused by
// later tasks in the same directory, and reaped after `ttlS` without a busy session.
//
// No orphans: stop()/stopAll() stop them; spawnOpencode kills its children when this process exits;
// after a SIGKILL of the conductor the next start's cleanStale() finds the rows whose conductorPid is
// dead and stops their servers.
//
// The start sequence itself (environment, sandbox, spawn, registry row) is start-instance.ts; the attach
// command is attach.ts. This file keeps the instances by directory, their reuse and the reaper.
import { realpathSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { join, resolve } from "node:path";
import { UsageError } from "../errors.js";
import { existingDirectory, MAX_PATH_CHARS } from "../inputs/directory.js";
import { guardRules } from "../policy/guard-rails.js";
import type { FallbackRecord } from "../turns/summary.js";
import { InstanceRegistry, withoutPassword, type PublicInstanceRow, type StaleCleanup } from "./registry.js";
import { isProcessAlive } from "../../client/discovery/processes.js";
import type { PermissionRule } from "../policy/permissions.js";
import { dataHome } from "./environment.js";
import { launchInstance } from "./start-instance.js";
import { attachCommandFor } from "./attach.js";
import type { AttachCommand, Instance, InstanceInfo, InstanceManagerOptions, Managed } from "./types.js";
import { isBusy } from "./busy.js";

const TOUCH_PERSIST_MS = 5_000;
/**
 * Servers started at once; the others wait their turn (their start time limit runs from their own
 * spawn). Twelve opencode servers starting together on two cores took longer than 30 s each.
 */
const CONCURRENT_STARTS = 3;

export class InstanceManager {
  readonly registry: InstanceRegistry;
  private readonly ttlMs: number;
  private readonly instances = new Map<string, Managed>();
  private readonly starting = new Map<string, Promise<Managed>>();
  private timer: NodeJS.Timeout | undefined;
  private reaping = false;
  private ready: Promise<StaleCleanup> | undefined;
  private launching = 0;
  private readonly turns: Array<() => void> = [];

  constructor(private readonly options: InstanceManagerOptions) {
    this.registry = new InstanceRegistry(options.stateDir);
    this.ttlMs = options.ttlS * 1000;
  }

  /** Instances run in the srt OS sandbox. */
  get sandboxed(): boolean {
    return this.options.sandbox === "srt";
  }

  /** Removes rows of dead conductors and stops their servers; runs once, before the first start. */
  cleanStale(): Promise<StaleCleanup> {
    this.ready ??= this.registry.cleanStale();
    return this.ready;
  }

  /**
   * The running instance for `directory`, started (and recorded) when there is none. `env` is added
   * to the environment of a server started here (e.g. a worktree task's CONDUCTOR_PORT, which its
   * agent's commands inherit); a running instance keeps the one it started with. `taskRules`: the
   * rules of the one task a new server is for (a worktree's): a 2.x server gets them in its config.
   */
  async acquire(directory: string, options: { env?: Record<string, string>; taskRules?: PermissionRule[] } = {}): Promise<Instance> {
    const dir = await existingDirectory(directory, { real: true });
    const running = this.instances.get(dir);
    if (running && !running.stopping) {
      this.touch(dir);
      return running;
    }
    let pending = this.starting.get(dir);
    if (!pending) {
      pending = this.start(dir, options.env, options.taskRules).finally(() => this.starting.delete(dir));
      this.starting.set(dir, pending);
    }
    return pending;
  }

  /** Marks the instance of `directory` as used now (resets its idle clock). */
  touch(directory: string): void {
    const m = this.find(directory);
    if (!m) return;
    m.lastUsed = Date.now();
    if (m.lastUsed - m.lastPersisted < TOUCH_PERSIST_MS) return;
    m.lastPersisted = m.lastUsed;
    void this.registry.update(m.pid, { lastUsedAt: new Date(m.lastUsed).toISOString() }).catch(() => undefined);
  }

  /** Keeps the instance from being reaped until the returned function is called. */
  hold(directory: string): () => void {
    const m = this.find(directory);
    if (!m) return () => undefined;
    m.holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      m.holds -= 1;
      m.lastUsed = Date.now();
    };
  }

  /** Every recorded instance (of every conductor), without passwords. */
  async list(): Promise<InstanceInfo[]> {
    await this.cleanStale();
    const now = Date.now();
    return (await this.registry.read()).map((row) => {
      const own = [...this.instances.values()].find((m) => m.pid === row.pid);
      const last = own ? own.lastUsed : Date.parse(row.lastUsedAt ?? row.startedAt);
      return { ...withoutPassword(row), owned: own !== undefined, ...(Number.isFinite(last) ? { idleS: Math.max(0, Math.round((now - last) / 1000)) } : {}) };
    });
  }

  /**
   * Stops the instance of a directory or pid: this conductor's own, or one whose conductor is gone.
   * Resolves with the stopped row, or undefined when nothing matched.
   */
  async stop(directoryOrPid: string | number): Promise<PublicInstanceRow | undefined> {
    if (typeof directoryOrPid === "string" && directoryOrPid.length > MAX_PATH_CHARS)
      throw new UsageError(
        `\`directory\` is ${directoryOrPid.length.toLocaleString("en")} characters, longer than any path (${MAX_PATH_CHARS.toLocaleString("en")}): give the project directory of an instance (action "list" shows them).`,
      );
    const own = this.find(directoryOrPid);
    if (own) {
      const row = (await this.registry.read()).find((r) => r.pid === own.pid);
      await this.stopManaged(own);
      return row ? withoutPassword(row) : undefined;
    }
    const rows = await this.registry.read();
    const wanted = typeof directoryOrPid === "number" ? directoryOrPid : await realpath(directoryOrPid).catch(() => resolve(directoryOrPid));
    const row = rows.find((r) => r.pid === wanted || r.directory === wanted);
    if (!row) return undefined;
    if (isProcessAlive(row.conductorPid)) {
      throw new UsageError(
        `Instance pid ${row.pid} (${row.directory}) belongs to the running conductor pid ${row.conductorPid}: stop it from there, or stop that conductor.`,
      );
    }
    // Its conductor is gone: the stale cleanup stops the server (after checking it is opencode).
    await this.registry.cleanStale();
    return withoutPassword(row);
  }

  /** Stops every instance this conductor started. Call on SIGTERM, SIGINT and stdin close. */
  async stopAll(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const starting = [...this.starting.values()].map((p) => p.catch(() => undefined));
    await Promise.all(starting);
    await Promise.all([...this.instances.values()].map((m) => this.stopManaged(m)));
  }

  /** The command to watch a session live in opencode's TUI; the password travels by env only. */
  attachCommand(instance: Pick<Instance, "url" | "pid" | "password"> & { major?: 1 | 2 }, sessionId: string): AttachCommand {
    return attachCommandFor(this.registry.path, instance, sessionId);
  }

  /** Records a session started on the instance of `directory` (shown by list() and oc_instances). */
  async recordSession(directory: string, session: { id: string; title: string; model: string; startedAt?: Date }): Promise<void> {
    const m = this.find(directory);
    if (!m) return;
    await this.registry.addSession(m.pid, {
      id: session.id,
      title: session.title,
      model: session.model,
      startedAt: (session.startedAt ?? new Date()).toISOString(),
      fallbacks: [],
    });
  }

  /** Records a model switch of a session; the session's model becomes `to`. */
  async recordFallback(directory: string, sessionId: string, fallback: Omit<FallbackRecord, "at"> & { at?: Date }): Promise<void> {
    const m = this.find(directory);
    if (!m) return;
    const record: FallbackRecord = { from: fallback.from, to: fallback.to, reason: fallback.reason, at: (fallback.at ?? new Date()).toISOString() };
    await this.registry.updateSession(m.pid, sessionId, (s) => ({ ...s, model: record.to, fallbacks: [...s.fallbacks, record] }));
  }

  /**
   * Session permission rules for work on an instance: the guard around the caller's own rules (which
   * may restrict further, never lift a denial); the caller's rules alone when unguarded.
   */
  sessionRules(userRules?: PermissionRule[]): PermissionRule[] | undefined {
    if (this.options.guard === false) return userRules;
    return guardRules({ opencodeDataDir: join(dataHome(this.options), "opencode"), ...(userRules ? { userRules } : {}) });
  }

  /** Passwords of this conductor's instances, for scrubbing answers. */
  secrets(): string[] {
    return [...this.instances.values()].map((m) => m.password);
  }

  // -------------------------------------------------------------------------------------------

  private find(directoryOrPid: string | number): Managed | undefined {
    if (typeof directoryOrPid === "number") return [...this.instances.values()].find((m) => m.pid === directoryOrPid);
    const abs = resolve(directoryOrPid);
    return this.instances.get(abs) ?? this.instances.get(realpathOrSelf(abs));
  }

  private async start(dir: string, env?: Record<string, string>, taskRules?: PermissionRule[]): Promise<Managed> {
    await this.cleanStale();
    // A finished start hands its slot to the next in line, so no newcomer slips in between.
    if (this.launching >= CONCURRENT_STARTS) await new Promise<void>((resolve) => this.turns.push(resolve));
    else this.launching++;
    let managed: Managed;
    try {
      managed = await launchInstance(this.options, this.registry, dir, env, taskRules);
    } finally {
      const next = this.turns.shift();
      if (next) next();
      else this.launching--;
    }
    this.instances.set(dir, managed);
    // `exited` settles once the server is gone AND forgotten (map, registry row).
    managed.exited = managed.server.exited.then(async (code) => {
      if (this.instances.get(dir) === managed) this.instances.delete(dir);
      await this.registry.remove(managed.pid).catch(() => undefined);
      this.options.onExit?.(managed);
      return code;
    });
    this.startReaper();
    return managed;
  }

  private async stopManaged(m: Managed): Promise<void> {
    m.stopping ??= (async () => {
      await m.server.stop();
      await m.exited;
    })();
    await m.stopping;
  }

  private startReaper(): void {
    if (this.timer) return;
    // Check at a fraction of the TTL (at most every 30 s) so an idle instance lives at most ~1.5 TTL.
    const every = Math.max(250, Math.min(this.ttlMs / 2, 30_000));
    this.timer = setInterval(() => void this.reap(), every);
    this.timer.unref();
  }

  private async reap(): Promise<void> {
    if (this.reaping) return;
    this.reaping = true;
    try {
      const now = Date.now();
      for (const m of [...this.instances.values()]) {
        if (m.stopping || m.holds > 0 || now - m.lastUsed < this.ttlMs) continue;
        if (await isBusy(m)) {
          m.lastUsed = Date.now(); // working: idle time starts when it stops
          continue;
        }
        await this.stopManaged(m);
      }
      if (this.instances.size === 0 && this.starting.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    } finally {
      this.reaping = false;
    }
  }
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
