// The delegation ledger: one record per accepted delegate or parallel call, kept in a store
// (state dir, Redis, or memory), and what this process knows beyond the store: which records it
// is starting right now (so a duplicate of the same request id waits for their sessions instead of
// polling), and how to stop them (the ledger's cancel). Reading, following and cancelling live in
// read.ts, follow.ts and cancel.ts; the start itself in start-once.ts.
import { abandoned, newDelegationId, startedSessions, thisProcess, type LedgerEnd, type LedgerRecord } from "./record.js";
import type { LedgerStore } from "./store.js";

/** What a start learns with a session, kept beside it. */
export type SessionFacts = Pick<LedgerRecord, "priorTurn" | "sentInput">;

export type NewRecord = Pick<LedgerRecord, "kind" | "requestId" | "origin" | "placement" | "server" | "size" | "queueId" | "governed" | "delivery">;

interface Starting {
  /** Resolves when the start has created every session it will (or ended). */
  started: Promise<void>;
  markStarted: () => void;
  /** Aborted by the ledger's cancel: the start creates no more sessions and stops waiting. */
  cancel: AbortController;
  /** The start's own end (its result or error), for waiters in this process. */
  done?: Promise<unknown>;
}

/** Between two reads of a record another process is starting. */
const POLL_MS = [50, 100, 200, 400, 800, 1000];

export class Ledger {
  private readonly starting = new Map<string, Starting>();
  /** Readers following records whose start is over (follow.ts), one per record in this process. */
  private readonly followers = new Map<string, Promise<void>>();
  private readonly followErrors = new Map<string, string>();
  private store?: Promise<LedgerStore>;

  constructor(private readonly open: () => Promise<LedgerStore>) {}

  private async s(): Promise<LedgerStore> {
    return (this.store ??= this.open());
  }

  async retentionMs(): Promise<number> {
    return (await this.s()).retentionMs;
  }

  /** A new record for this start, or the record its request id already names (`fresh: false`). */
  async claim(input: NewRecord): Promise<{ record: LedgerRecord; fresh: boolean }> {
    const now = new Date().toISOString();
    const record: LedgerRecord = {
      ...input,
      id: newDelegationId(),
      sessions: Array.from({ length: input.size }, () => null),
      owner: thisProcess(),
      started: false,
      createdAt: now,
      updatedAt: now,
    };
    const { record: held, created } = await (await this.s()).create(record);
    if (created) {
      let markStarted!: () => void;
      const started = new Promise<void>((resolve) => (markStarted = resolve));
      this.starting.set(held.id, { started, markStarted, cancel: new AbortController() });
    }
    return { record: held, fresh: created };
  }

  get(id: string): Promise<LedgerRecord | undefined> {
    return this.s().then((s) => s.get(id));
  }

  async list(limit: number): Promise<LedgerRecord[]> {
    return (await this.s()).list(limit);
  }

  private async change(id: string, f: (r: LedgerRecord) => LedgerRecord | undefined): Promise<LedgerRecord | undefined> {
    return (await this.s()).update(id, (r) => {
      const next = f(r);
      return next && { ...next, updatedAt: new Date().toISOString() };
    });
  }

  /** Records a task's session, before its prompt is sent (so a restart finds it); with the last one, the start has started. */
  async attach(id: string, index: number, sessionId: string, facts: SessionFacts = {}): Promise<void> {
    const next = await this.change(id, (r) => {
      const sessions = [...r.sessions];
      sessions[index] = sessionId;
      return { ...r, ...facts, sessions, ...(sessions.every((s) => s !== null) ? { started: true } : {}) };
    });
    if (next?.started) this.starting.get(id)?.markStarted();
  }

  /** Sets the fleet's id of a queued start. */
  async queued(id: string, queueId: string): Promise<void> {
    await this.change(id, (r) => ({ ...r, queueId }));
  }

  /** The start has created every session it will create. */
  async markStarted(id: string): Promise<void> {
    await this.change(id, (r) => (r.started ? undefined : { ...r, started: true }));
    this.starting.get(id)?.markStarted();
  }

  /** A reader's end (a follower's, a cancel's): it never replaces one (the owner's result, `finish`, is the richer one). */
  async settle(id: string, end: LedgerEnd): Promise<LedgerRecord | undefined> {
    return this.change(id, (r) => (r.end ? undefined : { ...r, started: true, end }));
  }

  /**
   * The owner's end of its start, decided on the record as it is under the store's lock (so a cancel
   * from any process, up to that moment, counts): settled with `endOf`'s end, else marked returned
   * while its work goes on. One locked change, where a read then a settle took two.
   */
  async finish(id: string, endOf: (record: LedgerRecord) => LedgerEnd | undefined): Promise<LedgerRecord | undefined> {
    const next = await this.change(id, (r) => {
      const end = endOf(r);
      if (end) return { ...r, started: true, returned: true, end };
      return r.started && r.returned ? undefined : { ...r, started: true, returned: true };
    });
    this.starting.get(id)?.markStarted();
    return next;
  }

  async requestCancel(id: string): Promise<LedgerRecord | undefined> {
    this.starting.get(id)?.cancel.abort();
    return this.change(id, (r) => (r.cancelRequestedAt || r.end ? undefined : { ...r, cancelRequestedAt: new Date().toISOString() }));
  }

  /** A start that failed before any session: forget it, so the same request id may start again. */
  async release(record: LedgerRecord): Promise<void> {
    await (await this.s()).remove(record);
    this.starting.get(record.id)?.markStarted();
    this.starting.delete(record.id);
  }

  /** This process runs the start of `id` right now. */
  runs(id: string): boolean {
    return this.starting.has(id);
  }

  /** The ledger's cancel of a start this process runs. */
  cancelSignal(id: string): AbortSignal | undefined {
    return this.starting.get(id)?.cancel.signal;
  }

  /** Remembers the start's end promise (for wait) and forgets the start once it is over. */
  running(id: string, done: Promise<unknown>): void {
    const s = this.starting.get(id);
    if (!s) return;
    s.done = done;
    const over = () => {
      s.markStarted();
      this.starting.delete(id);
    };
    void done.then(over, over);
  }

  /** The end of a start this process runs, if it runs one for `id`. */
  done(id: string): Promise<unknown> | undefined {
    return this.starting.get(id)?.done;
  }

  /**
   * Runs `follow` for `id` unless one runs already; it ends when the record is settled or it fails
   * (its error is kept for the next read, and the next read starts it again).
   */
  follow(id: string, follow: () => Promise<void>): Promise<void> {
    let running = this.followers.get(id);
    if (!running) {
      running = follow().then(
        () => void this.followErrors.delete(id),
        (error: Error) => void this.followErrors.set(id, error.message.slice(0, 500)),
      );
      this.followers.set(id, running);
      void running.then(() => this.followers.delete(id));
    }
    return running;
  }

  /** Why the last reader of `id` stopped, if it failed. */
  followError(id: string): string | undefined {
    return this.followErrors.get(id);
  }

  /**
   * The record once its start has created every session it will: at once for a start this process
   * runs, else by reading it again until then (its owner, maybe on another host, writes them).
   * Undefined when it was released meanwhile (the first start failed before any session).
   */
  async whenStarted(record: LedgerRecord, o: { signal?: AbortSignal } = {}): Promise<LedgerRecord | undefined> {
    const local = this.starting.get(record.id);
    if (local) {
      await local.started;
      return this.get(record.id);
    }
    for (let i = 0; ; i++) {
      const now = await this.get(record.id);
      if (!now) return undefined;
      if (now.started || startedSessions(now).length === now.size || abandoned(now) || o.signal?.aborted) return now;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS[Math.min(i, POLL_MS.length - 1)]));
    }
  }
}

// One ledger per state dir in this process: the MCP server's conductors (the main server, private
// instances, other servers) share its in-process knowledge of the starts it runs.
const byStateDir = new Map<string, Ledger>();

export function stateDirLedger(stateDir: string, open: () => Promise<LedgerStore>): Ledger {
  let ledger = byStateDir.get(stateDir);
  if (!ledger) byStateDir.set(stateDir, (ledger = new Ledger(open)));
  return ledger;
}
