// The MCP server's links to opencode, made on the first tool call (initialize and tools/list never
// touch opencode). The main server is found in this order: OPENCODE_URL, a running opencode on this
// machine, else a `opencode serve` started here (stopped when this process exits). Private
// instances (`isolation: "instance"`) are separate servers; a session id is routed to the server
// that holds it.
import { discoverConnection } from "../client/discovery/choose-server.js";
import { findRunningServers } from "../client/discovery/running-servers.js";
import { NotFoundError } from "../client/errors.js";
import { autoStart } from "../client/autostart.js";
import { MissingBinaryError, resolveOpencodeBinary, type SpawnedOpencode } from "../client/spawn.js";
import type { Config } from "../config.js";
import { Conductor } from "../core/conductor.js";
import type { CoreSettings } from "../core/context.js";
import { guardFeatures } from "../core/engine/server/feature-guard.js";
import { sharedInstanceManager } from "../core/instances/shared.js";
import { type InstanceManager } from "../core/instances/manager.js";
import { isSessionId } from "../core/inputs/ids.js";
import { InstanceLeases } from "../core/instances/leases.js";
import { sharedWorktrees } from "../core/worktrees/shared.js";
import type { Worktrees } from "../core/worktrees/worktrees.js";

export interface ConnectionStep {
  step: string;
  result: string;
}

export interface Connection {
  /**
   * The main server's conductor; with `sessionId`, the conductor of the server that holds it: a
   * private instance, the main server, or another opencode running on this machine (e.g. a TUI)
   * that accepts our password.
   */
  conductor(sessionId?: string): Promise<Conductor>;
  /** Conductors of the other opencode servers found running on this machine that accept our password. */
  otherServers(): Promise<Conductor[]>;
  /** Secrets learned at run time (passwords of servers started here). */
  secrets(): string[];
  /** How the main connection was found, step by step (no passwords), for oc_status. */
  describe(): { mode: "url" | "discovered" | "auto-started" | "not connected"; url?: string; steps: ConnectionStep[] };
  close(): Promise<void>;
}

export function createConnection(config: Config): Connection {
  let pending: Promise<Conductor> | undefined;
  let started: SpawnedOpencode | undefined;
  /** The password of a 2.x service read from its discovery file, scrubbed from answers like our own. */
  let servicePassword: string | undefined;
  let main: Conductor | undefined;
  let mode: "url" | "discovered" | "auto-started" = "url";
  let steps: ConnectionStep[] = [];
  let manager: InstanceManager | undefined;
  let leases: InstanceLeases<Conductor> | undefined;
  const byUrl = new Map<string, Conductor>();
  const sessionHome = new Map<string, Conductor>();

  const worktrees = sharedWorktrees(config);
  const settings: CoreSettings & { stateDir: string; worktrees: Worktrees } = {
    defaultModel: config.defaultModel,
    modelAllow: config.modelAllow,
    modelBlock: config.modelBlock,
    fallbackModels: config.fallbackModels,
    retryTimeoutS: config.retryTimeoutS,
    // The delegation ledger (request ids) and the task records the web console reads.
    stateDir: config.stateDir,
    // Worktree tasks, whichever conductor (main or private instance) a session id leads to.
    worktrees,
  };
  const instances = () => (manager ??= sharedInstanceManager(config));
  // Private instances run the pinned binary; their conductors are shared by every main conductor.
  const instanceLeases = () =>
    (leases ??= new InstanceLeases(instances(), (i) => new Conductor({ url: i.url, password: i.password, directory: i.directory, ...settings })));
  // Rows left by a conductor that was killed (SIGKILL): stop their servers now, at start.
  void instances()
    .cleanStale()
    .catch(() => undefined);
  // Worktrees and branches of a conductor that was killed mid-task: removed now (finished tasks' branches stay).
  void worktrees.cleanStale().catch(() => undefined);

  // The main server and other running ones may be any opencode release: check each request against
  // the server's own spec (private instances run the pinned binary).
  const guarded = (c: Conductor): Conductor => {
    guardFeatures(c.client, { stateDir: config.stateDir });
    return c;
  };
  const fleetPeers = new WeakSet<Conductor>();
  // A worker's server may be any opencode release too; each peer is guarded once.
  const fleetGuarded = (c: Conductor): Conductor => (fleetPeers.has(c) ? c : (fleetPeers.add(c), guarded(c)));

  async function open(): Promise<Conductor> {
    const ownPids = (
      await instances()
        .registry.read()
        .catch(() => [])
    ).map((row) => row.pid);
    // With OPENCODE_CONDUCTOR_DEBUG: each discovery step on stderr as it is decided (no passwords in them).
    const debug = (step: ConnectionStep) => {
      if (config.debug) process.stderr.write(`opencode-conductor: discovery: ${step.step}: ${step.result}\n`);
    };
    const found = await discoverConnection({
      // HOME / XDG_STATE_HOME: where the opencode 2.x service's discovery file is.
      env: {
        OPENCODE_URL: config.opencodeUrl,
        OPENCODE_PASSWORD: config.opencodePassword,
        OPENCODE_USERNAME: config.opencodeUsername,
        HOME: process.env.HOME,
        XDG_STATE_HOME: process.env.XDG_STATE_HOME,
      },
      directory: config.directory ?? process.cwd(),
      excludePids: ownPids,
      onStep: debug,
    });
    steps = [...found.steps];
    if (found.connection) {
      mode = found.connection.source === "scan" || found.connection.source === "service" ? "discovered" : "url";
      const { url, password, username } = found.connection;
      if (found.connection.source === "service") servicePassword = password;
      return guarded(new Conductor({ url, password, username, directory: config.directory, ...settings, instances: instanceLeases() }));
    }
    // A 2.x CLI starts (or reuses) its background service, which stays running; otherwise a private
    // `opencode serve` that stops with this process.
    const auto = await autoStart({ cwd: config.directory ?? process.cwd() }).catch((error: unknown) => {
      if (error instanceof MissingBinaryError) throw new Error(`No opencode server is configured or running, and ${error.message}`);
      const binary = resolveOpencodeBinary();
      throw new Error(
        `No opencode server is configured or running, and starting one (${binary} serve) failed: ${(error as Error).message}. ` +
          "Install opencode (npm i -g opencode-ai) or start one yourself (`opencode serve --port 4096`) and set OPENCODE_URL (and OPENCODE_PASSWORD).",
      );
    });
    mode = "auto-started";
    const startStep = { step: "auto-start", result: auto.note };
    steps.push(startStep);
    debug(startStep);
    if (auto.kind === "service") {
      const { url, password } = auto.service.registration;
      servicePassword = password;
      return guarded(
        new Conductor({ url, ...(password !== undefined ? { password } : {}), directory: config.directory, ...settings, instances: instanceLeases() }),
      );
    }
    started = auto.server;
    // In the registry, so that if this process is SIGKILLed the next start stops the server (cleanStale).
    const server = started;
    await instances()
      .registry.add({
        runtime: "opencode serve",
        sandbox: "none",
        port: server.port,
        pid: server.pid,
        conductorPid: process.pid,
        directory: config.directory ?? process.cwd(),
        startedAt: new Date().toISOString(),
        password: server.password,
        url: server.url,
        sessions: [],
      })
      .catch(() => undefined);
    void server.exited.then(() =>
      instances()
        .registry.remove(server.pid)
        .catch(() => undefined),
    );
    return guarded(new Conductor({ url: started.url, password: started.password, directory: config.directory, ...settings, instances: instanceLeases() }));
  }

  function mainConductor(): Promise<Conductor> {
    pending ??= open().then(
      (c) => (main = c),
      (error: unknown) => {
        pending = undefined; // let the next call try again
        throw error;
      },
    );
    return pending;
  }

  async function otherServers(): Promise<Conductor[]> {
    const primary = await mainConductor();
    const ownPids = await instanceLeases().pids();
    const found = await findRunningServers({ password: config.opencodePassword, username: config.opencodeUsername, excludePids: ownPids });
    return found
      .filter((s) => s.healthy && s.url !== primary.engine.url)
      .map((s) => {
        let c = byUrl.get(s.url);
        if (!c)
          byUrl.set(s.url, (c = guarded(new Conductor({ url: s.url, password: config.opencodePassword, username: config.opencodeUsername, ...settings }))));
        return c;
      });
  }

  // Through the engine, so a 2.x server is asked its own way; a server that does not answer in 5 s does not hold it.
  const holds = (c: Conductor, sessionId: string) =>
    Promise.race([
      c.engine.getSession(sessionId),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no answer in 5 s")), 5_000).unref()),
    ]).then(
      () => true,
      (error: unknown) => (error instanceof NotFoundError ? false : Promise.reject(error)),
    );

  return {
    async conductor(sessionId) {
      const primary = await mainConductor();
      // Something that is not a session id is not looked up on every server (a huge one would
      // cost a huge URL per server): the core refuses it with a bounded error.
      if (!isSessionId(sessionId)) return primary;
      // A turn the primary follows is on its server: no lookup, which a server that does not answer would hold for 5 s.
      if (primary.follows(sessionId)) return primary;
      // A session the fleet's index puts on a worker's opencode goes there first: one Redis read,
      // where asking the primary first could take a slow answer for "not here".
      const indexed = sessionHome.get(sessionId) ?? (await primary.fleetHolder(sessionId, { indexOnly: true }).catch(() => undefined));
      if (indexed && !sessionHome.has(sessionId)) sessionHome.set(sessionId, fleetGuarded(indexed));
      const home =
        sessionHome.get(sessionId) ??
        (await instanceLeases().holding(sessionId)) ??
        ((await holds(primary, sessionId).catch(() => true)) ? primary : undefined);
      if (home) return home;
      // With a queue: a session a worker ran lives on that worker's opencode (the fleet's record says which).
      const onFleet = await primary.fleetHolder(sessionId).catch(() => undefined);
      if (onFleet) {
        sessionHome.set(sessionId, fleetGuarded(onFleet));
        return onFleet;
      }
      // Not ours: maybe a session of another opencode on this machine (a TUI window, a serve).
      for (const other of await otherServers().catch(() => [])) {
        if (await holds(other, sessionId).catch(() => false)) {
          sessionHome.set(sessionId, other);
          return other;
        }
      }
      return primary; // the call will say the session was not found
    },
    otherServers,
    secrets: () => [
      ...(started ? [started.password] : []),
      ...(servicePassword ? [servicePassword] : []),
      ...(manager?.secrets() ?? []),
      ...(main?.fleetSecrets() ?? []),
    ],
    describe: () => (main ? { mode, url: main.engine.url, steps } : { mode: "not connected", steps }),
    async close() {
      // An auto-start still under way would otherwise leave its server to the exit-time SIGKILL.
      await pending?.catch(() => undefined);
      main?.close();
      leases?.closeAll();
      worktrees.close();
      for (const c of byUrl.values()) c.close();
      await Promise.all([started?.stop(), manager?.stopAll()]);
    },
  };
}
