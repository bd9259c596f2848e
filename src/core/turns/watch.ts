// Follows a session's turn on the event stream and asks the turn machine (turns/machine.ts)
// whether opencode has recorded its end: an idle alone never ends a turn; on opencode 2.x the
// `session.execution.*` outcome event is the evidence. It is engine-neutral: the engine's
// translator (engine/v1-signals.ts, engine/v2-signals.ts) tells it what each event means. Subscribe before prompting. It also keeps what the caller is shown while the turn runs:
// progress, files edited, the permission requests and questions that block it. After a reconnect,
// or when attaching to a session someone else prompted, it re-reads the server and resyncs the
// machine; when the session stays idle without a recorded end, timers re-read and then give up
// (`lost`); when the server goes away the turn is `lost` at once.
import type { Engine, SessionTranslator, TurnSnapshot, WatchSignal } from "../engine/engine.js";
import { describeRequest, type PendingRequest } from "../policy/approvals.js";
import type { EventSource, HubEvent } from "../event-hub.js";
import type { SessionMessage } from "./session-message.js";
import { SeenMessages } from "./messages.js";
import { TurnMachine, type SessionActivity, type TurnEvent, type TurnMachineOptions } from "./machine.js";
import type { RecordedError, TurnVerdict } from "./record.js";
import { recordedMessage } from "./v1-events.js";

export type TurnProgress =
  | { kind: "busy"; message: string }
  | { kind: "tool"; tool: string; status: "running" | "completed" | "error"; title?: string; message: string }
  | { kind: "file"; file: string; message: string }
  | { kind: "retry"; attempt: number; nextAt: number; reason: string; message: string }
  | { kind: "fallback"; from: string; to: string; reason: string; message: string }
  | { kind: "blocked"; request: PendingRequest; message: string };

/** How a wait ended: the turn is over, it waits on a person, the caller's time ran out, or the caller cancelled. */
export type WaitOutcome = "idle" | "blocked" | "timeout" | "cancelled";

export interface TurnWaitOptions {
  /** Give up waiting after this long (the turn keeps running). Default: no limit. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Return `blocked` as soon as a permission or question waits (default true). */
  returnOnBlocked?: boolean;
}

export interface TurnWatchOptions {
  onProgress?: (progress: TurnProgress) => void;
  /** Called on every session.status retry, e.g. by the fallback watchdog. */
  onRetry?: (status: { attempt: number; message: string; next: number }) => void;
}

/** A prompt accepted this recently may still be about to turn busy (~0.6 s on a fresh instance, more under load). */
const START_GRACE_MS = 10_000;
/** Idle with the reply not yet terminal: a failed turn's error lands within ~250 ms; after this, read again, then give up. */
const SETTLE_MS = 2_000;

/** The reason a request's answered signal aborts: someone else (another client, the web console) answered it. */
export class AnsweredElsewhere extends Error {
  constructor(readonly requestId: string) {
    super(`request ${requestId} was answered elsewhere`);
    this.name = "AnsweredElsewhere";
  }
}

export class TurnWatch {
  /** Sessions whose requests block this one: itself and sub-agent children seen while watching. */
  readonly sessions: Set<string>;
  readonly pending = new Map<string, PendingRequest>();
  readonly filesEdited = new Set<string>();
  retry: { attempt: number; message: string; next: number } | undefined;
  /** The session's last turn as known when its end was confirmed (the summary reuses it). */
  messages: SessionMessage[] | undefined;
  private failure: unknown;
  /** unknown: nobody told us whether a turn runs (attach on the first wait). */
  private state: "unknown" | "running" | "ended" = "unknown";
  /** Decides the end; created when the turn is known (our prompt, or the first read when attaching). */
  private machine: TurnMachine | undefined;
  private final: TurnVerdict | undefined;
  /** The session's messages as events told them since we subscribed (complete for a turn we prompted, on 1.x). */
  private readonly seen = new SeenMessages();
  private sawBusy = false;
  private promptedAt = 0;
  private activity: SessionActivity | undefined;
  /** Re-reads armed while the session is idle and the machine still waits for evidence. */
  private evidenceTimer: NodeJS.Timeout | undefined;
  private evidenceReads = 0;
  private readonly wakers = new Set<() => void>();
  /** One per request asked about: aborted when opencode says it was answered (answeredSignal). */
  private readonly replies = new Map<string, AbortController>();
  private readonly endListeners = new Set<() => void>();
  private unsubscribe: (() => void) | undefined;
  private closed = false;
  /** Where progress goes; swapped when another caller picks up a turn left running. */
  onProgress: ((progress: TurnProgress) => void) | undefined;
  private checks: Promise<void> = Promise.resolve();

  private constructor(
    private readonly engine: Engine,
    readonly sessionId: string,
    private readonly options: TurnWatchOptions,
    private readonly translator: SessionTranslator,
    private readonly machineOptions: TurnMachineOptions,
  ) {
    this.sessions = new Set([sessionId]);
    this.onProgress = options.onProgress;
    // Engines that stream no whole messages (2.x) leave the summary to read the session.
    this.seen.complete = machineOptions.statedOutcomes !== true;
  }

  /** How the turn ended, as opencode recorded it (set once `ended`). */
  get verdict(): TurnVerdict | undefined {
    return this.final;
  }

  /** Subscribes (and waits until the subscription is live) before the caller prompts. */
  static async start(engine: Engine, hub: EventSource, sessionId: string, options: TurnWatchOptions = {}): Promise<TurnWatch> {
    const kit = await engine.watchKit(sessionId);
    const watch = new TurnWatch(engine, sessionId, options, kit.translator, kit.machine);
    watch.unsubscribe = await hub.subscribe(
      (event) => watch.onEvent(event),
      (error) => watch.fail(error),
    );
    return watch;
  }

  /** The project directory whose instance this watch reads. */
  get directory(): string | undefined {
    return this.engine.directory;
  }

  get ended(): boolean {
    return this.state === "ended";
  }

  /** True once the turn ended or the watch failed: nothing more will happen. */
  get settled(): boolean {
    return this.state === "ended" || this.failure !== undefined;
  }

  /**
   * Call right before sending a prompt. `after` is the newest message id before it (undefined for
   * a new session): idles that do not answer a later user message are ignored.
   */
  prompted(after?: string): void {
    this.state = "running";
    this.machine = new TurnMachine(after, this.machineOptions);
    this.sawBusy = false;
    this.promptedAt = Date.now();
    this.evidenceReads = 0;
    this.messages = undefined;
    clearTimeout(this.evidenceTimer);
    // What the events told since we subscribed (the prompt's own messages) counts already.
    if (this.activity) this.machine.apply({ type: "status", status: this.activity });
    for (const m of this.seen.list()) this.machine.apply({ type: "message", message: recordedMessage(m) });
  }

  /** The server went away: the turn's end will never be recorded by this server process. */
  lose(error: RecordedError): void {
    if (this.settled) return;
    this.end(this.seen.list(), { status: "lost", error });
  }

  /** Ends the wait with an error, e.g. when the prompt request itself failed. */
  fail(error: unknown): void {
    if (this.settled) return;
    this.failure = error;
    this.settle();
  }

  /** Runs `listener` once the turn ends or the watch fails (at once if it already did). */
  onSettled(listener: () => void): void {
    if (this.settled) listener();
    else this.endListeners.add(listener);
  }

  /** Stops watching; a wait still running on it answers `cancelled`. */
  close(): void {
    clearTimeout(this.evidenceTimer);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.closed = true;
    this.notify();
  }

  async wait(options: TurnWaitOptions = {}): Promise<WaitOutcome> {
    const returnOnBlocked = options.returnOnBlocked ?? true;
    const attaching = this.state === "unknown";
    if (attaching) this.schedule(() => this.attach().catch((error: unknown) => this.fail(error)));
    await this.checks;
    // Events cover what happens after our subscription; a request asked before it, or answered a
    // moment ago (its reply event may still be on the way), needs the server's list.
    if (returnOnBlocked && !this.settled && (attaching || this.pending.size > 0)) await this.refreshPending();

    const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
    while (true) {
      if (this.failure !== undefined) throw this.failure;
      if (this.state === "ended") return "idle";
      if (returnOnBlocked && this.pending.size > 0) return "blocked";
      if (options.signal?.aborted || this.closed) return "cancelled";
      const left = deadline === undefined ? undefined : deadline - Date.now();
      if (left !== undefined && left <= 0) return "timeout";
      await this.sleepUntilEvent(left, options.signal);
      await this.checks;
    }
  }

  /** Waiting on a session we did not prompt: its last turn, as the server holds it, is the one we follow. */
  private async attach(): Promise<void> {
    if (this.state !== "unknown") return;
    this.state = "running";
    const snap = await this.read();
    const { records, messages } = snap;
    const lastUser = records.findLastIndex((m) => m.role === "user");
    if (lastUser < 0 && records.length === 0) return this.end(messages, { status: "done" }); // a session that never ran
    this.machine = new TurnMachine(lastUser > 0 ? records[lastUser - 1]!.id : undefined, this.machineOptions);
    const user = messages.findLast((m) => m.info.role === "user")?.info;
    this.promptedAt = user?.role === "user" ? user.time.created : 0;
    this.resync(snap);
  }

  /** What the server holds now: the session's activity and its last turn. */
  private async read(): Promise<TurnSnapshot> {
    const snap = await this.engine.snapshot(this.sessionId);
    if (snap.retry) this.retry = snap.retry;
    if (snap.activity !== "idle") this.sawBusy = true;
    return snap;
  }

  private resync(snap: TurnSnapshot): void {
    if (!this.machine || this.settled) return;
    this.activity = snap.activity;
    this.machine.resync({ activity: snap.activity, messages: snap.records });
    this.afterEvidence(snap.messages);
  }

  /** Feeds one event to the machine and acts on what it decided. */
  private feed(event: TurnEvent): void {
    if (!this.machine || this.settled) return;
    this.machine.apply(event);
    this.afterEvidence();
  }

  /** Ends the watch on a verdict, or arms the re-read that looks for evidence an idle session owes us. */
  private afterEvidence(read?: SessionMessage[]): void {
    const machine = this.machine;
    if (!machine || this.settled) return;
    // Events after a reconnect miss what the gap held: then the summary reads the session itself.
    if (machine.verdict) return this.end(read ?? (this.seen.complete ? this.seen.list() : undefined), machine.verdict);
    const phase = machine.phase;
    const idle = this.activity === "idle";
    if (!idle || (phase !== "settling" && phase !== "waiting")) {
      clearTimeout(this.evidenceTimer);
      this.evidenceTimer = undefined;
      this.evidenceReads = 0;
      return;
    }
    if (this.evidenceTimer) return;
    // settling: the reply's end is due within ms; waiting: a prompt accepted a moment ago may start yet.
    const ms = phase === "settling" ? SETTLE_MS : Math.max(SETTLE_MS, this.promptedAt + START_GRACE_MS - Date.now());
    this.evidenceTimer = setTimeout(() => {
      this.evidenceTimer = undefined;
      this.schedule(() => this.lookAgain());
    }, ms);
    this.evidenceTimer.unref();
  }

  /** The session stayed idle without evidence: read it; the second time in a row, take what is there. */
  private async lookAgain(): Promise<void> {
    if (!this.machine || this.settled) return;
    const snap = await this.read();
    const { activity, messages } = snap;
    this.evidenceReads += 1;
    this.resync(snap);
    if (this.settled || activity !== "idle" || this.evidenceReads < 2) return;
    clearTimeout(this.evidenceTimer);
    this.evidenceTimer = undefined;
    const verdict = this.machine.giveUp({
      name: "TurnLost",
      message: "opencode is idle but recorded no end of this turn (it may have restarted under it, or dropped a queued message).",
    });
    this.end(messages, verdict);
  }

  /**
   * Aborted (reason AnsweredElsewhere) once opencode reports request `id` answered, by whoever: a
   * handler asking a person (an MCP form) stops asking when the answer came from somewhere else.
   */
  answeredSignal(id: string): AbortSignal {
    let controller = this.replies.get(id);
    if (!controller) this.replies.set(id, (controller = new AbortController()));
    return controller.signal;
  }

  private replied(id: string): void {
    const wasPending = this.pending.delete(id);
    let controller = this.replies.get(id);
    // Kept only for this watch's own requests (a later answeredSignal must see it aborted).
    if (!controller && !wasPending) return;
    if (!controller) this.replies.set(id, (controller = new AbortController()));
    if (!controller.signal.aborted) controller.abort(new AnsweredElsewhere(id));
  }

  /** Merges the server's list: drops what was answered, keeps what was asked meanwhile. */
  private async refreshPending(): Promise<void> {
    const known = new Set(this.pending.keys());
    const open = await this.engine.listPending(this.sessions);
    const openIds = new Set(open.map((r) => r.id));
    for (const id of known) if (!openIds.has(id)) this.replied(id);
    for (const request of open) this.pending.set(request.id, request);
  }

  private sleepUntilEvent(ms: number | undefined, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.wakers.delete(done);
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
      this.wakers.add(done);
    });
  }

  private notify(): void {
    for (const wake of [...this.wakers]) wake();
  }

  private end(messages: SessionMessage[] | undefined, verdict: TurnVerdict): void {
    if (this.settled) return;
    this.final = verdict;
    this.state = "ended";
    this.messages = messages;
    this.pending.clear();
    clearTimeout(this.evidenceTimer);
    this.settle();
  }

  private settle(): void {
    for (const listener of [...this.endListeners]) listener();
    this.endListeners.clear();
    this.notify();
  }

  private progress(p: TurnProgress): void {
    try {
      this.onProgress?.(p);
    } catch {
      // a failing progress consumer must not break the wait
    }
  }

  private onEvent(event: HubEvent): void {
    if (event.type === "conductor.lost") return this.lose(event.properties.error);
    if (event.type === "conductor.reconnected") {
      // Events were lost while the stream was down: read what the server holds now.
      this.seen.complete = false;
      this.schedule(async () => {
        if (!this.machine || this.settled) return;
        this.resync(await this.read());
        await this.refreshPending();
      });
      return;
    }
    for (const signal of this.translator.translate(event, this.sessions)) this.signal(signal);
  }

  /** Bookkeeping for the caller (messages seen, progress, the requests that block the turn), and evidence for the machine. */
  private signal(s: WatchSignal): void {
    switch (s.kind) {
      case "turn":
        if (s.event.type === "status") this.activity = s.event.status;
        return this.feed(s.event);
      case "child":
        this.sessions.add(s.sessionId);
        return;
      case "busy":
        if (!this.sawBusy && this.state === "running") this.progress({ kind: "busy", message: "working" });
        this.sawBusy = true;
        this.retry = undefined;
        return;
      case "retry": {
        this.sawBusy = true;
        this.retry = { attempt: s.attempt, message: s.message, next: s.next };
        const inS = Math.max(0, Math.round((s.next - Date.now()) / 1000));
        this.progress({
          kind: "retry",
          attempt: s.attempt,
          nextAt: s.next,
          reason: s.message,
          message: `model error, retry ${s.attempt} in ${inS}s: ${s.message}`,
        });
        this.options.onRetry?.(this.retry);
        this.notify();
        return;
      }
      case "step-finished":
        return;
      case "request":
        if (this.settled) return;
        this.pending.set(s.request.id, s.request);
        this.progress({ kind: "blocked", request: s.request, message: `waiting for an answer: ${describeRequest(s.request)}` });
        this.notify();
        return;
      case "request-answered":
        this.replied(s.id);
        return;
      case "tool":
        this.progress({ kind: "tool", tool: s.tool, status: s.status, title: s.title, message: `${s.tool} ${s.status}${s.title ? `: ${s.title}` : ""}` });
        if (s.file && !this.filesEdited.has(s.file)) {
          this.filesEdited.add(s.file);
          this.progress({ kind: "file", file: s.file, message: `edited ${s.file}` });
        }
        return;
      case "seen-message":
        this.seen.message(s.info);
        return;
      case "seen-part":
        this.seen.part(s.part);
        return;
      case "seen-removed":
        this.seen.remove(s.messageId, s.partId);
        return;
    }
  }

  /** Runs checks one after another so their reads and the wait loop see a consistent state. */
  private schedule(check: () => Promise<void>): void {
    this.checks = this.checks
      .then(check)
      .catch(() => undefined)
      .then(() => this.notify());
  }
}
