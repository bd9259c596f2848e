// The sessions `resources/list` offers as transcripts, kept so that listing never waits on opencode.
// A list call answers from what is kept: nothing before this process has reached opencode (a
// listing must not auto-start a server, and a client that waits for its servers' lists before the
// first model turn gives up on one that is slow), and afterwards the last rows read, refreshed in
// the background when they are older than FRESH_MS. A refresh that brings other rows tells the
// listeners (the servers send `notifications/resources/list_changed`); a refresh that fails keeps
// the rows and tries again at the next listing. One per connection to opencode, shared by every
// McpServer built on it (the HTTP transports build one per client session or per request).
import type { Conductor } from "../core/conductor.js";
import { listSessions, type SessionRow } from "../core/sessions/rows.js";

/** Sessions listed as resources (newest first): enough to pick from, not the whole history. */
export const LISTED_SESSIONS = 20;
/** Rows younger than this are served without a refresh. */
const FRESH_MS = 2_000;
/** A refresh that takes longer is given up (a hung opencode must not hold a refresh for ever). */
const REFRESH_MS = 10_000;

export class RecentSessions {
  private rows: SessionRow[] = [];
  private readAt = 0;
  private connected = false;
  private refreshing: Promise<void> | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly conductor: () => Promise<Conductor>) {}

  /** The conductor reached opencode (a tool call connected): listings may read sessions from now on. */
  markConnected(): void {
    this.connected = true;
  }

  /** Something changed the sessions (a delegation started one): the next listing reads them again. */
  invalidate(): void {
    this.readAt = 0;
  }

  /** The kept rows, at once; starts a background refresh when they are stale and opencode is reachable. */
  list(): SessionRow[] {
    if (this.connected && Date.now() - this.readAt >= FRESH_MS) void this.refresh();
    return this.rows;
  }

  /** Told each time a refresh brings a different list. Returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One refresh at a time; resolves when it is over (tests and the benchmark wait on it). */
  refresh(): Promise<void> {
    this.refreshing ??= this.read().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async read(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer in ${REFRESH_MS} ms`)), REFRESH_MS);
      timer.unref();
    });
    try {
      const rows = await Promise.race([this.conductor().then((c) => listSessions(c, { limit: LISTED_SESSIONS })), limit]);
      this.readAt = Date.now();
      const changed = key(rows) !== key(this.rows);
      this.rows = rows;
      if (changed) for (const listener of this.listeners) listener();
    } catch {
      // opencode is away or slow: keep what was read, the next listing tries again
    } finally {
      clearTimeout(timer);
    }
  }
}

const key = (rows: SessionRow[]) => JSON.stringify(rows.map((r) => [r.id, r.title, r.directory, r.updated]));

// One per conductor function: the CLI passes the same one to every server it builds.
const byConductor = new WeakMap<object, RecentSessions>();

/** The cache shared by every server built on this conductor function. */
export function recentSessionsOf(conductor: (sessionId?: string) => Promise<Conductor>): RecentSessions {
  let cache = byConductor.get(conductor);
  if (!cache) byConductor.set(conductor, (cache = new RecentSessions(() => conductor())));
  return cache;
}
