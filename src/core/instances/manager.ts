// Private headless opencode servers, one per project directory, for unattended work
// (`isolation: "instance"`): started on a free port with a random password, the guard rails in
// their config and a credential-free environment, recorded in $STATE_DIR/instances.json, reused by
// later tasks in the same directory, and reaped after `ttlS` without a busy session.
//
// No orphans: stop()/stopAll() stop them; spawnOpencode kills its children when this process exits;
// after a SIGKILL of the conductor the next start's cleanStale() finds the rows whose conductorPid is
// dead and stops their servers.
import { realpathSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { connect, type OpencodeClient } from "../../client/connect.js";
import { cliInfo } from "../../client/service/cli.js";
import { resolveOpencodeBinary, spawnOpencode, randomPassword, type SpawnedOpencode } from "../../client/spawn.js";
import { connectV2, type OpencodeV2Client } from "../../client/v2/index.js";
import type { Config } from "../../config.js";
import { UsageError } from "../errors.js";
import { existingDirectory } from "../inputs/directory.js";
import { guardConfig, guardedEnv, guardPermissionConfig, guardRules } from "../policy/guard-rails.js";
import { guardConfigV2, withGuardV2 } from "../policy/guard-rails-v2.js";
import type { FallbackRecord } from "../turns/summary.js";
import { InstanceRegistry, processStartTime, withoutPassword, type InstanceRow, type PublicInstanceRow, type StaleCleanup } from "./registry.js";
import { isProcessAlive } from "../../client/discovery/processes.js";
import type { PermissionRule } from "../policy/permissions.js";
import { prepareSandbox, resolveSrt, type Sandbox } from "./sandbox.js";

type Json = Record<string, unknown>;

export interface InstanceManagerOptions {
  stateDir: string;
  /** Idle seconds (no busy session, no use) before an instance is stopped. */
  ttlS: number;
  /** opencode binary; default: the pinned one (see resolveOpencodeBinary). */
  binary?: string;
  /** Base environment of instances (default process.env); credentials are removed from it. */
  env?: NodeJS.ProcessEnv;
  /** Extra opencode config for a directory (e.g. a provider), merged under the guard config. */
  configFor?(directory: string): Json | undefined | Promise<Json | undefined>;
  /** Environment names to keep although they look like credentials (e.g. AWS_* for Bedrock). */
  keepEnv?: string[];
  /** Apply the guard rails (default true). */
  guard?: boolean;
  /** How long to wait for `opencode serve` to listen (default 30 s). */
  startTimeoutMs?: number;
  /** Run each instance in the srt OS sandbox (see src/core/instances/sandbox.ts); never unsandboxed if it fails. */
  sandbox?: "srt";
  /** Path of the srt binary; default: the installed package's, else `srt` on PATH. */
  srtBinary?: string;
  /** Hosts a sandboxed instance may reach besides loopback (default: DEFAULT_ALLOWED_DOMAINS). */
  sandboxAllowedDomains?: string[];
  /** Told about every server started and every one that ended (tests track pids with it). */
  onSpawn?(instance: Instance): void;
  onExit?(instance: Instance): void;
}

export interface Instance {
  directory: string;
  url: string;
  port: number;
  pid: number;
  /** Basic-auth password (user `opencode`). Keep it out of anything shown. */
  password: string;
  startedAt: Date;
  /** The binary's major: 2.x speaks only the v2 API (see `client`). */
  major: 1 | 2;
  /** A v1 client bound to the instance and its directory (of no use on a 2.x instance). */
  client: OpencodeClient;
  /** Resolves with the exit code or signal once the server ended and its registry row is gone. */
  exited: Promise<number | string>;
}

export interface InstanceInfo extends PublicInstanceRow {
  /** Started by this conductor (only those can be stopped here while their conductor lives). */
  owned: boolean;
  /** Seconds since the last use, when known. */
  idleS?: number;
}

export interface AttachCommand {
  /** What to show: `opencode attach <url> --session <id>` (no password). */
  command: string;
  /** Environment for running `command` yourself (holds the password: do not show). */
  /** `OPENCODE_SERVER_PASSWORD` (1.x) or `OPENCODE_PASSWORD` (2.x). */
  env: Record<string, string>;
  /** A shell line that reads the password from the registry, safe to show. */
  shell: string;
}

interface Managed extends Instance {
  server: SpawnedOpencode;
  sandbox?: Sandbox;
  lastUsed: number;
  lastPersisted: number;
  holds: number;
  /** Status checks in a row that got no answer. */
  unanswered: number;
  /** The v2 client of a 2.x instance, made on the first status check. */
  v2?: Promise<OpencodeV2Client>;
  stopping?: Promise<void>;
}

const TOUCH_PERSIST_MS = 5_000;

export class InstanceManager {
  readonly registry: InstanceRegistry;
  private readonly ttlMs: number;
  private readonly instances = new Map<string, Managed>();
  private readonly starting = new Map<string, Promise<Managed>>();
  private timer: NodeJS.Timeout | undefined;
  private reaping = false;
  private ready: Promise<StaleCleanup> | undefined;

  constructor(private readonly options: InstanceManagerOptions) {
    this.registry = new InstanceRegistry(options.stateDir);
    this.ttlMs = options.ttlS * 1000;
  }

  /** Removes rows of dead conductors and stops their servers; runs once, before the first start. */
  cleanStale(): Promise<StaleCleanup> {
    this.ready ??= this.registry.cleanStale();
    return this.ready;
  }

  /** The running instance for `directory`, started (and recorded) when there is none. */
  async acquire(directory: string): Promise<Instance> {
    const dir = await existingDirectory(directory, { real: true });
    const running = this.instances.get(dir);
    if (running && !running.stopping) {
      this.touch(dir);
      return running;
    }
    let pending = this.starting.get(dir);
    if (!pending) {
      pending = this.start(dir).finally(() => this.starting.delete(dir));
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
      throw new UsageError(`Instance pid ${row.pid} (${row.directory}) belongs to the running conductor pid ${row.conductorPid}: stop it from there, or stop that conductor.`);
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
    // 2.x has no `attach`: its TUI takes `--server` and the password from OPENCODE_PASSWORD.
    const v2 = instance.major === 2;
    const command = v2 ? `opencode --server ${instance.url} --session ${sessionId}` : `opencode attach ${instance.url} --session ${sessionId}`;
    const variable = v2 ? "OPENCODE_PASSWORD" : "OPENCODE_SERVER_PASSWORD";
    const read = `require(${JSON.stringify(this.registry.path)}).instances.find((i) => i.pid === ${instance.pid}).password`;
    const shell = `${variable}="$(node -p ${shellQuote(read)})" ${command}`;
    return { command, env: { [variable]: instance.password }, shell };
  }

  /** Records a session started on the instance of `directory` (shown by list() and oc_instances). */
  async recordSession(directory: string, session: { id: string; title: string; model: string; startedAt?: Date }): Promise<void> {
    const m = this.find(directory);
    if (!m) return;
    await this.registry.addSession(m.pid, { id: session.id, title: session.title, model: session.model, startedAt: (session.startedAt ?? new Date()).toISOString(), fallbacks: [] });
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
    return guardRules({ opencodeDataDir: join(this.dataHome(), "opencode"), ...(userRules ? { userRules } : {}) });
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

  private dataHome(): string {
    const env = this.options.env ?? process.env;
    return env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share");
  }

  private async environment(directory: string, major: 1 | 2): Promise<NodeJS.ProcessEnv> {
    const base = this.options.env ?? process.env;
    const guard = this.options.guard !== false;
    const env = guard ? guardedEnv(base, { keep: this.options.keepEnv }) : { ...base };
    // The caller's own inline config stays, under ours; the guard comes last so it wins.
    let config = parseJson(base.OPENCODE_CONFIG_CONTENT, "OPENCODE_CONFIG_CONTENT");
    config = deepMerge(config, (await this.options.configFor?.(directory)) ?? {});
    if (major === 2) {
      // 2.x reads no OPENCODE_PERMISSION; its inline config is loaded last (guard-rails-v2.ts).
      if (guard) config = withGuardV2(config, guardConfigV2({ opencodeDataDir: join(this.dataHome(), "opencode") }));
      env.OPENCODE_CONFIG_CONTENT = JSON.stringify(config);
      return env;
    }
    if (guard) config = deepMerge(config, guardConfig());
    env.OPENCODE_CONFIG_CONTENT = JSON.stringify(config);
    // opencode merges OPENCODE_PERMISSION after every config file, the repository's included.
    if (guard) env.OPENCODE_PERMISSION = JSON.stringify(deepMerge(parseJson(base.OPENCODE_PERMISSION, "OPENCODE_PERMISSION"), guardPermissionConfig()));
    return env;
  }

  private async prepareSandbox(dir: string, env: NodeJS.ProcessEnv): Promise<Sandbox> {
    const srt = resolveSrt(this.options.srtBinary); // throws: a missing srt never runs unsandboxed
    return prepareSandbox({
      srt,
      stateDir: this.options.stateDir,
      directory: dir,
      env,
      hide: [this.options.stateDir], // the registry holds every instance password
      ...(this.options.sandboxAllowedDomains ? { allowedDomains: this.options.sandboxAllowedDomains } : {}),
    });
  }

  private async start(dir: string): Promise<Managed> {
    await this.cleanStale();
    const binary = this.options.binary ?? resolveOpencodeBinary();
    const major = (await cliInfo(binary, this.options.env ?? process.env)).major === 2 ? 2 : 1;
    const env = await this.environment(dir, major);
    const sandbox = this.options.sandbox === "srt" ? await this.prepareSandbox(dir, env) : undefined;
    let server: SpawnedOpencode;
    try {
      server = await spawnOpencode({
        cwd: dir,
        env,
        password: randomPassword(),
        binary,
        ...(this.options.startTimeoutMs ? { startTimeoutMs: this.options.startTimeoutMs } : {}),
        ...(sandbox ? { port: sandbox.port, wrap: sandbox.wrap } : {}),
      });
    } catch (error) {
      await sandbox?.close();
      throw error;
    }
    if (sandbox) void server.exited.then(() => sandbox.close());
    const now = Date.now();
    const managed: Managed = {
      directory: dir,
      url: server.url,
      port: server.port,
      pid: server.pid,
      password: server.password,
      startedAt: new Date(now),
      major,
      client: connect({ url: server.url, password: server.password, directory: dir }),
      exited: server.exited,
      server,
      ...(sandbox ? { sandbox } : {}),
      lastUsed: now,
      lastPersisted: now,
      holds: 0,
      unanswered: 0,
    };
    this.options.onSpawn?.(managed);
    const conductorStartTime = processStartTime(process.pid);
    const row: InstanceRow = {
      runtime: "opencode serve",
      sandbox: sandbox ? "srt" : "none",
      port: server.port,
      pid: server.pid,
      conductorPid: process.pid,
      ...(conductorStartTime !== undefined ? { conductorStartTime } : {}),
      directory: dir,
      startedAt: managed.startedAt.toISOString(),
      lastUsedAt: managed.startedAt.toISOString(),
      password: server.password,
      url: server.url,
      sessions: [],
    };
    try {
      await this.registry.add(row);
    } catch (error) {
      await server.stop();
      this.options.onExit?.(managed);
      throw error;
    }
    this.instances.set(dir, managed);
    // `exited` settles once the server is gone AND forgotten (map, registry row).
    managed.exited = server.exited.then(async (code) => {
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
        if (await this.busy(m)) {
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

  /** A session of the instance is busy or retrying (`session.status` lists only those). */
  private async busy(m: Managed): Promise<boolean> {
    try {
      const status = m.major === 2 ? await activeV2(m) : await m.client.call("session.status", {}, { timeoutMs: 5_000 });
      m.unanswered = 0;
      return Object.keys(status ?? {}).length > 0;
    } catch {
      // A loaded server can be slow to answer: only one that stays silent is reaped as broken.
      m.unanswered += 1;
      return m.unanswered < 3;
    }
  }
}

/** 2.x: `GET /api/session/active` lists the running sessions (`{data: {ses_…: {type: "running"}}}`). */
async function activeV2(m: Managed): Promise<Record<string, unknown>> {
  const pending = (m.v2 ??= connectV2({ url: m.url, password: m.password }));
  pending.catch(() => (m.v2 = undefined)); // a failed connect is retried at the next check
  const answer = (await (await pending).request("session.active", {}, { timeoutMs: 5_000 })) as { data?: Record<string, unknown> } | undefined;
  return answer?.data ?? {};
}

// ---------------------------------------------------------------------------------------------

let shared: { stateDir: string; manager: InstanceManager } | undefined;

/**
 * The process-wide manager for the MCP server (oc_delegate isolation "instance", oc_instances).
 * `options` count on the first call only (per state dir).
 */
export function sharedInstanceManager(config: Pick<Config, "stateDir" | "instanceTtlS" | "sandbox">, options: Partial<InstanceManagerOptions> = {}): InstanceManager {
  if (!shared || shared.stateDir !== config.stateDir) {
    const sandbox = config.sandbox ? { sandbox: config.sandbox } : {};
    shared = { stateDir: config.stateDir, manager: new InstanceManager({ stateDir: config.stateDir, ttlS: config.instanceTtlS, ...sandbox, ...options }) };
  }
  return shared.manager;
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function parseJson(text: string | undefined, name: string): Json {
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : {};
  } catch {
    throw new UsageError(`${name} is not valid JSON; fix or unset it before starting an instance.`);
  }
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
