// The opencode servers the console follows: every server a task record names, and every private
// instance of the registry. Each gets a Conductor (the same core the MCP server uses, so a status
// here is the status a tool would give) and its engine's event stream for live state, whichever
// major the server is (1.x `/global/event`, 2.x `/api/event`): the events are read through the
// engine-neutral translations of core/engine (server-events.ts, live-parts.ts). Passwords come from
// the instance registry or the console's own environment and stay in this process.
import type { Config } from "../config.js";
import { Conductor } from "../core/conductor.js";
import type { EngineKind } from "../core/engine/engine.js";
import type { HubEvent } from "../core/engine/hub-events.js";
import { LiveParts } from "../core/engine/live-parts.js";
import { activityOf, requestChangeOf } from "../core/engine/server-events.js";
import type { InstanceRow } from "../core/instances/registry.js";
import { followed, type Store } from "./store.js";

export interface ServerView {
  url: string;
  healthy: boolean;
  version?: string;
  /** The API the server speaks: `v1` (opencode 1.x) or `v2` (2.x). */
  engine?: EngineKind;
  error?: string;
  /** Sessions of the console's tasks on this server. */
  tasks: number;
  instance?: {
    pid: number;
    port: number;
    directory: string;
    conductor_pid: number;
    started_at: string;
    last_used_at?: string;
    sessions: number;
    sandbox: string;
  };
}

interface Followed {
  conductor: Conductor;
  view: ServerView;
  stop: AbortController;
  parts: LiveParts;
}

export class Servers {
  private readonly followed = new Map<string, Followed>();
  private instances: InstanceRow[] = [];
  /** Passwords of the fleet's servers (from the queue's server table). */
  private readonly fleetPasswords = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly config: Pick<Config, "opencodePassword" | "opencodeUsername">,
    private readonly onChange: () => void,
  ) {}

  /** Every password the console holds, to scrub from anything it sends. */
  secrets(): string[] {
    return [this.config.opencodePassword ?? "", ...this.instances.map((r) => r.password), ...this.fleetPasswords];
  }

  list(): ServerView[] {
    return [...this.followed.values()].map((f) => ({ ...f.view, tasks: [...this.store.tasks.values()].filter((t) => t.server === f.view.url).length }));
  }

  instanceRows(): InstanceRow[] {
    return this.instances;
  }

  /** The private instance holding `sessionId`, by the registry. */
  instanceUrlOf(sessionId: string): string | undefined {
    return this.instances.find((r) => r.sessions.some((s) => s.id === sessionId))?.url;
  }

  /** How to reach `url`: an instance's own password, a fleet server's, or the console's. */
  access(url: string): { password?: string; username?: string } {
    const row = this.instances.find((r) => r.url === url);
    if (row) return { password: row.password };
    return { password: this.config.opencodePassword, username: this.config.opencodeUsername };
  }

  conductor(url: string): Conductor | undefined {
    return this.followed.get(url)?.conductor;
  }

  /** The registry changed: follow new instances, forget removed ones. */
  setInstances(rows: InstanceRow[]): void {
    this.instances = rows;
    for (const row of rows) this.follow(row.url);
    for (const [url, f] of this.followed) {
      const row = rows.find((r) => r.url === url);
      f.view.instance = row && {
        pid: row.pid,
        port: row.port,
        directory: row.directory,
        conductor_pid: row.conductorPid,
        started_at: row.startedAt,
        last_used_at: row.lastUsedAt,
        sessions: row.sessions.length,
        sandbox: row.sandbox,
      };
    }
    this.onChange();
  }

  /** Starts following `url` (once); `access`: how to reach a fleet worker's server (its table row). */
  follow(url: string, access?: { username?: string; password?: string }): void {
    if (this.followed.has(url)) return;
    const row = this.instances.find((r) => r.url === url);
    if (access?.password) this.fleetPasswords.add(access.password);
    const password = row?.password ?? access?.password ?? this.config.opencodePassword;
    const username = row ? undefined : access ? access.username : this.config.opencodeUsername;
    const conductor = new Conductor({ url, queue: false, ...(password ? { password, username } : {}) });
    const followed: Followed = { conductor, view: { url, healthy: false, tasks: 0 }, stop: new AbortController(), parts: new LiveParts() };
    this.followed.set(url, followed);
    void this.run(followed);
  }

  close(): void {
    for (const f of this.followed.values()) {
      f.stop.abort();
      f.conductor.close();
    }
    this.followed.clear();
  }

  private async run(f: Followed): Promise<void> {
    const { signal } = f.stop;
    while (!signal.aborted) {
      try {
        await this.checkHealth(f);
        for await (const event of f.conductor.engine.events({ signal })) {
          if (event.type === "server.connected" || event.type === "conductor.reconnected") {
            if (event.type === "conductor.reconnected") void this.checkHealth(f).catch(() => undefined);
            void this.resync(f);
          } else if (event.type === "conductor.disconnected") this.down(f, event.properties.message);
          else this.apply(f, event);
        }
      } catch (error) {
        if (signal.aborted) return;
        this.down(f, (error as Error).message);
      }
      // Unreachable for now: try again a little later (the stream has its own quick reconnects).
      await new Promise((resolve) => setTimeout(resolve, 5_000).unref());
    }
  }

  /** What the server says it is: healthy, its version, the API it speaks. */
  private async checkHealth(f: Followed): Promise<void> {
    const [health, info] = await Promise.all([f.conductor.engine.health(), f.conductor.engine.info()]);
    f.view = { ...f.view, healthy: health.healthy, version: health.version, engine: info.kind, error: undefined };
    this.onChange();
  }

  private down(f: Followed, message: string): void {
    f.view = { ...f.view, healthy: false, error: message.slice(0, 200) };
    this.onChange();
  }

  /** After (re)connecting: the pending requests and the state of every unfinished task, as opencode has them now. */
  private async resync(f: Followed): Promise<void> {
    const tasks = [...this.store.tasks.values()].filter((t) => t.server === f.view.url);
    const directories = new Set([undefined, ...tasks.map((t) => t.directory)]);
    const pending = await Promise.all(
      [...directories].map(async (d) => {
        const engine = f.conductor.engine.withDirectory(d);
        return (await engine.listPending().catch(() => [])).map((r) => ({ ...r, server: f.view.url, directory: d, asked_at: Date.now() }));
      }),
    );
    this.store.resetPending(f.view.url, [...new Map(pending.flat().map((r) => [r.id, r])).values()]);
    await Promise.all(tasks.filter(followed).map((t) => this.refresh(t.id)));
  }

  /**
   * Reads what opencode recorded for a task (the core's result(), as oc_result would). `afterEnd`:
   * the read follows an event saying the run ended; 2.x sends that event a moment before it takes
   * the session off its active list, so a read still saying running is made once more a second
   * later (no further event would correct it).
   */
  async refresh(sessionId: string, afterEnd = false): Promise<void> {
    const task = this.store.tasks.get(sessionId);
    const conductor = task && this.conductor(task.server);
    if (!conductor) return;
    try {
      const state = await conductor.result(sessionId);
      if (afterEnd && state.state !== "idle") setTimeout(() => void this.refresh(sessionId), 1_000).unref();
      const last = state.last;
      this.store.live(sessionId, { type: state.state, ...(state.retry ? { attempt: state.retry.attempt, message: state.retry.message } : {}) });
      this.store.settled(sessionId, {
        status: state.state === "idle" || state.state === "unreachable" ? last.status : last.status === "blocked" ? "blocked" : "running",
        tokens: last.tokens?.total,
        cost: last.cost,
        files: last.files?.map((x) => x.path),
        error: last.error?.message,
        model: last.model,
      });
    } catch {
      // The server is away: its tasks keep their last known state until it answers again.
    }
  }

  private apply(f: Followed, event: HubEvent): void {
    const activity = activityOf(event);
    if (activity) {
      // 1.x says busy, retry or idle; a 2.x run that ended says nothing of what comes next: result() reads it.
      if (activity.state === "retry") this.store.live(activity.sessionId, { type: "retry", attempt: activity.attempt, message: activity.message });
      else if (activity.state !== "ended") this.store.live(activity.sessionId, { type: activity.state });
      // A run that ended whose caller has not answered (or is gone): read what opencode recorded.
      const ended = activity.state === "idle" || activity.state === "ended";
      const task = this.store.tasks.get(activity.sessionId);
      if (ended && task && followed(task)) void this.refresh(activity.sessionId, true);
    }
    const request = requestChangeOf(event);
    if (request?.kind === "asked") {
      const directory = "directory" in event ? event.directory : undefined;
      this.store.asked({ ...request.request, server: f.view.url, directory, asked_at: Date.now() });
    } else if (request?.kind === "answered") this.store.replied(request.id);
    for (const live of f.parts.translate(event, (id) => this.store.tasks.has(id))) this.store.emit({ type: "part", live });
  }
}
