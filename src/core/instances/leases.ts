// Work on private instances (`isolation: "instance"`): a lease holds the instance of a directory
// while a task runs on it (so it is not reaped), gives the session rules of the guard rails around
// the caller's own, and records each session in the registry as soon as it exists, so the work is
// on record while it runs and can be found again after a restart. One conductor per instance.
import { binaryOf } from "../engine/binary.js";
import type { PermissionRule } from "../policy/permissions.js";
import type { Instance } from "./types.js";
import type { InstanceManager } from "./manager.js";

/** What a lease needs of a conductor: to be closed when its instance ends. */
export interface Closable {
  close(): void;
}

export interface InstanceLease<C> {
  conductor: C;
  directory: string;
  /** Lets the instance be reaped again once the work is recorded. */
  release(): void;
  /** Session rules for work on the instance (the guard around the caller's rules). */
  rules(userRules?: PermissionRule[]): PermissionRule[] | undefined;
  /** Remembers a session as living on this instance; returns the command to watch it live. */
  record(session: { id: string; title: string; model: string }): Promise<string>;
}

type Reachable = Pick<Instance, "pid" | "url" | "password" | "directory">;

export class InstanceLeases<C extends Closable> {
  private readonly byPid = new Map<number, C>();
  private readonly home = new Map<string, C>();

  constructor(
    readonly manager: InstanceManager,
    private readonly connect: (instance: Reachable) => C,
  ) {}

  /**
   * The instance of `directory` (started or reused, `env` added to a new one's environment), held
   * until `release()`. `taskRules`: the rules of the one task a new server is for (see acquire).
   */
  async lease(directory: string, options: { env?: Record<string, string>; taskRules?: PermissionRule[] } = {}): Promise<InstanceLease<C>> {
    const instance = await this.manager.acquire(directory, options);
    const release = this.manager.hold(instance.directory);
    const conductor = this.conductorOf(instance);
    void instance.exited.then(() => {
      conductor.close();
      this.byPid.delete(instance.pid);
      // Its sessions are read through other servers on the same data dir from now on.
      for (const [id, c] of this.home) if (c === conductor) this.home.delete(id);
    });
    return {
      conductor,
      directory: instance.directory,
      release,
      // Where the server has the guard rails in its config only (2.x), only the caller's rules go
      // with the session, and none when the server holds them in its config too.
      rules: (userRules) =>
        instance.rulesInConfig ? undefined : binaryOf(instance.major).guardInSessionRules ? this.manager.sessionRules(userRules) : userRules,
      record: async (session) => {
        this.home.set(session.id, conductor);
        await this.manager.recordSession(instance.directory, session);
        return this.manager.attachCommand(instance, session.id).shell;
      },
    };
  }

  /** The conductor of the instance holding `sessionId`: remembered here, or listed in the registry (e.g. after a restart). */
  async holding(sessionId: string): Promise<C | undefined> {
    const known = this.home.get(sessionId);
    if (known) return known;
    const rows = await this.manager.registry.read().catch(() => []);
    const row = rows.find((r) => r.sessions.some((s) => s.id === sessionId));
    if (!row) return undefined;
    const conductor = this.conductorOf(row);
    this.home.set(sessionId, conductor);
    return conductor;
  }

  /** Pids of the servers in the registry (to tell them apart from servers found running). */
  async pids(): Promise<number[]> {
    return (await this.manager.registry.read().catch(() => [])).map((row) => row.pid);
  }

  conductorOf(instance: Reachable): C {
    let conductor = this.byPid.get(instance.pid);
    if (!conductor) this.byPid.set(instance.pid, (conductor = this.connect(instance)));
    return conductor;
  }

  closeAll(): void {
    for (const conductor of this.byPid.values()) conductor.close();
  }
}
