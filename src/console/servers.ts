// The opencode servers the console follows: every server a task record names, and every private
// instance of the registry. Each gets a Conductor (the same core the MCP server uses, so a status
// here is the status a tool would give) and one `/global/event` stream for live state. Passwords
// come from the instance registry or the console's own environment and stay in this process.
import type { Config } from "../config.js";
import { Conductor } from "../core/conductor.js";
import { permissionFrom, questionFrom, listPending } from "../core/policy/approvals.js";
import type { InstanceRow } from "../core/instances/registry.js";
import type { Store } from "./store.js";

export interface ServerView {
  url: string;
  healthy: boolean;
  version?: string;
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
}

export class Servers {
  private readonly followed = new Map<string, Followed>();
  private instances: InstanceRow[] = [];

  constructor(
    private readonly store: Store,
    private readonly config: Pick<Config, "opencodePassword" | "opencodeUsername">,
    private readonly onChange: () => void,
  ) {}

  /** Every password the console holds, to scrub from anything it sends. */
  secrets(): string[] {
    return [this.config.opencodePassword ?? "", ...this.instances.map((r) => r.password)];
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

  /** Starts following `url` (once). */
  follow(url: string): void {
    if (this.followed.has(url)) return;
    const row = this.instances.find((r) => r.url === url);
    const password = row?.password ?? this.config.opencodePassword;
    const conductor = new Conductor({ url, ...(password ? { password, username: row ? undefined : this.config.opencodeUsername } : {}) });
    const followed: Followed = { conductor, view: { url, healthy: false, tasks: 0 }, stop: new AbortController() };
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
        const health = await f.conductor.client.call("global.health", {});
        f.view = { ...f.view, healthy: health.healthy, version: health.version, error: undefined };
        this.onChange();
        for await (const event of f.conductor.client.events({ signal, giveUpAfterMs: 30_000 })) {
          if (event.type === "server.connected" || event.type === "conductor.reconnected") void this.resync(f);
          else if (event.type === "conductor.disconnected") this.down(f, event.properties.message);
          else this.apply(f, event as { type: string; properties: Record<string, unknown>; directory?: string });
        }
      } catch (error) {
        if (signal.aborted) return;
        this.down(f, (error as Error).message);
      }
      // Unreachable for now: try again a little later (the stream has its own quick reconnects).
      await new Promise((resolve) => setTimeout(resolve, 5_000).unref());
    }
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
        const client = d === undefined ? f.conductor.client : f.conductor.client.withDirectory(d);
        return (await listPending(client).catch(() => [])).map((r) => ({ ...r, server: f.view.url, directory: d, asked_at: Date.now() }));
      }),
    );
    this.store.resetPending(f.view.url, [...new Map(pending.flat().map((r) => [r.id, r])).values()]);
    await Promise.all(tasks.filter((t) => t.status_from !== "tool").map((t) => this.refresh(t.id)));
  }

  /** Reads what opencode recorded for a task (the core's result(), as oc_result would). */
  async refresh(sessionId: string): Promise<void> {
    const task = this.store.tasks.get(sessionId);
    const conductor = task && this.conductor(task.server);
    if (!conductor) return;
    try {
      const state = await conductor.result(sessionId);
      const last = state.last;
      this.store.live(sessionId, { type: state.state, ...(state.retry ? { attempt: state.retry.attempt, message: state.retry.message } : {}) });
      this.store.settled(sessionId, {
        status: state.state === "idle" ? last.status : last.status === "blocked" ? "blocked" : "running",
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

  private apply(f: Followed, event: { type: string; properties: Record<string, unknown>; directory?: string }): void {
    const p = event.properties;
    switch (event.type) {
      case "session.status": {
        const status = p.status as { type: string; attempt?: number; message?: string };
        this.store.live(p.sessionID as string, status);
        // An idle task whose caller has not answered (or is gone): read what opencode recorded.
        if (status.type === "idle" && this.store.tasks.get(p.sessionID as string)?.status_from !== "tool") void this.refresh(p.sessionID as string);
        return;
      }
      case "permission.asked":
        this.store.asked({ ...permissionFrom(p as never), server: f.view.url, directory: event.directory, asked_at: Date.now() });
        return;
      case "question.asked":
        this.store.asked({ ...questionFrom(p as never), server: f.view.url, directory: event.directory, asked_at: Date.now() });
        return;
      case "permission.replied":
      case "question.replied":
      case "question.rejected":
        this.store.replied(p.requestID as string);
        return;
      case "message.part.updated": {
        const part = p.part as { sessionID: string };
        if (this.store.tasks.has(part.sessionID)) this.store.emit({ type: "part", sessionId: part.sessionID, part });
        return;
      }
      case "message.part.delta": {
        if (this.store.tasks.has(p.sessionID as string)) this.store.emit({ type: "part", sessionId: p.sessionID as string, part: { delta: true, ...p } });
        return;
      }
    }
  }
}
