// Waiting for a task to end. Turn ends come from BullMQ's event stream (one QueueEvents per queue,
// fanned out to the waiters of each job id) and from the fleet's channel (an attempt's outcome is
// recorded before BullMQ completes the job, and stays when BullMQ refused to); a slow re-read of the
// job only covers events missed while Redis was away. A permission or question in the worker's
// session goes to `onBlocked` as it would in process (the MCP server asks the user), or the wait
// answers `blocked`. Split from client.ts: wait, waitBatch (batch.ts) and cancel (cancel.ts) wait
// this way.
import { QueueEvents } from "bullmq";
import type { BlockedHandler } from "../turns/blocked.js";
import { AnsweredElsewhere } from "../turns/pending-requests.js";
import type { TurnProgress } from "../turns/turn-progress.js";
import type { Detail } from "../turns/summary.js";
import type { QueueConnection } from "./redis-connection.js";
import type { QueuedSummary, TaskOutcome } from "./outcome.js";
import { fromOutcome, homeOf, readTask } from "./task-state.js";

/** Re-read a waited-for job this often even without an event (events are missed while Redis restarts). */
const RECHECK_MS = 10_000;

export interface QueueWaitOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  detail?: Detail;
  onProgress?: (progress: TurnProgress) => void;
  /** Handles each permission request or question of the worker's session (answer it, or give it back as `blocked`). */
  onBlocked?: BlockedHandler;
  /** Without `onBlocked`: answer `blocked` as soon as a request waits (default true). */
  returnOnBlocked?: boolean;
}

type JobEventKind = "progress" | "end" | "active";
type JobListener = (kind: JobEventKind, data?: unknown) => void;

const isOutcome = (v: unknown): v is TaskOutcome => typeof v === "object" && v !== null && "summary" in v && "attempts" in v;

/** One BullMQ event stream per queue, made on first wait and kept; listeners by job id. */
export class JobEvents {
  private readonly events = new Map<string, Promise<QueueEvents>>();
  private readonly listeners = new Map<string, Set<JobListener>>();

  constructor(private readonly conn: QueueConnection) {}

  of(queueName: string): Promise<QueueEvents> {
    let p = this.events.get(queueName);
    if (!p) {
      const ev = new QueueEvents(queueName, { connection: { url: this.conn.settings.url, maxRetriesPerRequest: null }, prefix: this.conn.settings.prefix });
      ev.on("error", () => undefined);
      const emit = (id: string, kind: JobEventKind, data?: unknown) => this.listeners.get(id)?.forEach((f) => f(kind, data));
      ev.on("progress", ({ jobId, data }) => emit(jobId, "progress", data));
      ev.on("completed", ({ jobId, returnvalue }) => emit(jobId, "end", returnvalue));
      ev.on("failed", ({ jobId }) => emit(jobId, "end"));
      ev.on("active", ({ jobId }) => emit(jobId, "active"));
      p = ev.waitUntilReady().then(() => ev);
      this.events.set(queueName, p);
    }
    return p;
  }

  listen(id: string, f: JobListener): () => void {
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(f);
    return () => {
      set!.delete(f);
      if (set!.size === 0) this.listeners.delete(id);
    };
  }

  async close(): Promise<void> {
    const events = [...this.events.values()];
    this.events.clear();
    await Promise.all(events.map((p) => p.then((e) => e.close()).catch(() => undefined)));
  }
}

/** Waits for the task to end (or the timeout/cancel: then `running`, and the task goes on). */
export async function waitTask(conn: QueueConnection, events: JobEvents, taskId: string, o: QueueWaitOptions = {}): Promise<QueuedSummary> {
  const queueName = await homeOf(conn, taskId);
  await events.of(queueName);
  const deadline = o.timeoutMs === undefined ? Infinity : Date.now() + o.timeoutMs;
  // A wake between a read and the wait that follows it must not be lost: it is remembered.
  let woken: boolean;
  let wakeNow: () => void = () => undefined;
  const wake = () => ((woken = true), wakeNow());
  let outcome: TaskOutcome | undefined;
  // Requests handed to onBlocked, each with the signal that withdraws it once it is answered elsewhere.
  const asked = new Map<string, AbortController>();
  let givenBack: QueuedSummary | undefined;
  const answered = (id: string) => {
    const c = asked.get(id);
    if (c && !c.signal.aborted) c.abort(new AnsweredElsewhere(id));
  };
  // Subscribed before the first read, so an end between the read and the wait is not missed.
  const off = events.listen(taskId, (kind, data) => {
    if (kind === "progress") {
      const p = data as TurnProgress | undefined;
      if (p && typeof p.message === "string") o.onProgress?.(p);
      return;
    }
    // The completed event carries the job's return value: no second read needed.
    if (kind === "end" && isOutcome(data)) outcome = data;
    wake();
  });
  const offFleet = await conn.channel.listen((e) => {
    if (e.type === "answered" && e.taskId === taskId) answered(e.requestId);
    if ((e.type === "outcome" || e.type === "asked" || e.type === "answered") && e.taskId === taskId) wake();
  });
  try {
    for (;;) {
      woken = false;
      if (outcome) return fromOutcome(queueName, outcome, {});
      if (givenBack) return givenBack;
      const now = await readTask(conn, taskId);
      if (now.status === "blocked") {
        const open = new Set((now.pending ?? []).map((r) => r.id));
        for (const id of asked.keys()) if (!open.has(id)) answered(id);
        if (!o.onBlocked && o.returnOnBlocked !== false) return now;
        for (const request of now.pending ?? []) {
          if (!o.onBlocked || asked.has(request.id)) continue;
          const c = new AbortController();
          asked.set(request.id, c);
          const signal = o.signal ? AbortSignal.any([o.signal, c.signal]) : c.signal;
          const left = deadline === Infinity ? undefined : Math.max(0, deadline - Date.now());
          void o.onBlocked(request, { timeoutMs: left, signal }).then(
            (r) => {
              if (r === "return" && !c.signal.aborted) givenBack = now;
              wake();
            },
            () => ((givenBack = now), wake()),
          );
        }
      } else if (now.status !== "running") return now;
      else for (const id of asked.keys()) answered(id);
      const left = deadline - Date.now();
      if (left <= 0 || o.signal?.aborted) return now;
      if (woken) continue;
      await new Promise<void>((resolve) => {
        // However it wakes (the recheck, an event, the abort), its listener leaves the caller's signal.
        const done = () => (clearTimeout(timer), o.signal?.removeEventListener("abort", done), (wakeNow = () => undefined), resolve());
        const timer = setTimeout(done, Math.min(left, RECHECK_MS));
        wakeNow = done;
        o.signal?.addEventListener("abort", done, { once: true });
      });
    }
  } finally {
    off();
    offFleet();
    // Whatever is still being asked about is no longer this wait's: withdraw it.
    for (const id of asked.keys()) answered(id);
  }
}
