// Follows a session's turn on the event stream (docs/opencode-behaviour.md §2) and asks the
// turn machine (turns/machine.ts) whether opencode has recorded its end: an idle alone never ends
// a turn. Subscribe before prompting. It also keeps what the caller is shown while the turn runs:
// progress, files edited, the permission requests and questions that block it. After a reconnect,
// or when attaching to a session someone else prompted, it re-reads the server and resyncs the
// machine; when the session stays idle without a recorded end, timers re-read and then give up
// (`lost`); when the server goes away the turn is `lost` at once.
import type { OpencodeClient } from "../../client/connect.js";
import type { Schemas } from "../../client/types.js";
import { describeRequest, listPending, permissionFrom, questionFrom, type PendingRequest } from "../policy/approvals.js";
import type { EventSource, HubEvent } from "../event-hub.js";
import { FILE_TOOLS, filePathOf } from "./summary.js";
import type { SessionMessage } from "./session-message.js";
import { readLastTurn, SeenMessages } from "./messages.js";
import { TurnMachine, type SessionActivity, type TurnEvent } from "./machine.js";
import type { RecordedError, TurnVerdict } from "./record.js";
import { recordedMessage, V1TurnEvents } from "./v1-events.js";

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
  private readonly translate: V1TurnEvents;
  /** The session's messages as events told them since we subscribed (complete for a turn we prompted). */
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
  private readonly toolStatus = new Map<string, string>();
  /** Where progress goes; swapped when another caller picks up a turn left running. */
  onProgress: ((progress: TurnProgress) => void) | undefined;
  private checks: Promise<void> = Promise.resolve();

  private constructor(
    private readonly client: OpencodeClient,
    readonly sessionId: string,
    private readonly options: TurnWatchOptions,
  ) {
    this.sessions = new Set([sessionId]);
    this.onProgress = options.onProgress;
    this.translate = new V1TurnEvents(sessionId);
  }

  /** How the turn ended, as opencode recorded it (set once `ended`). */
  get verdict(): TurnVerdict | undefined {
    return this.final;
  }

  /** Subscribes (and waits until the subscription is live) before the caller prompts. */
  static async start(client: OpencodeClient, hub: EventSource, sessionId: string, options: TurnWatchOptions = {}): Promise<TurnWatch> {
    const watch = new TurnWatch(client, sessionId, options);
    watch.unsubscribe = await hub.subscribe(
      (event) => watch.onEvent(event),
      (error) => watch.fail(error),
    );
    return watch;
  }

  /** The project directory whose instance this watch reads. */
  get directory(): string | undefined {
    return this.client.directory;
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
    this.machine = new TurnMachine(after);
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
    const [activity, messages] = await Promise.all([this.readActivity(), readLastTurn(this.client, this.sessionId)]);
    const lastUser = messages.findLastIndex((m) => m.info.role === "user");
    if (lastUser < 0 && messages.length === 0) return this.end(messages, { status: "done" }); // a session that never ran
    this.machine = new TurnMachine(lastUser > 0 ? messages[lastUser - 1]!.info.id : undefined);
    const user = messages[lastUser]?.info;
    this.promptedAt = user?.role === "user" ? user.time.created : 0;
    this.resync(activity, messages);
  }

  /** The session's status as `GET /session/status` has it (idle sessions are absent). */
  private async readActivity(): Promise<SessionActivity> {
    const status = (await this.client.call("session.status"))[this.sessionId];
    if (status?.type === "retry") this.retry = { attempt: status.attempt, message: status.message, next: status.next };
    if (status && status.type !== "idle") this.sawBusy = true;
    return status?.type ?? "idle";
  }

  private resync(activity: SessionActivity, messages: SessionMessage[]): void {
    if (!this.machine || this.settled) return;
    this.activity = activity;
    this.machine.resync({ activity, messages: messages.map(recordedMessage) });
    this.afterEvidence(messages);
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
    const [activity, messages] = await Promise.all([this.readActivity(), readLastTurn(this.client, this.sessionId)]);
    this.evidenceReads += 1;
    this.resync(activity, messages);
    if (this.settled || activity !== "idle" || this.evidenceReads < 2) return;
    clearTimeout(this.evidenceTimer);
    this.evidenceTimer = undefined;
    const verdict = this.machine.giveUp({ name: "TurnLost", message: "opencode is idle but recorded no end of this turn (it may have restarted under it, or dropped a queued message)." });
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
    const open = await listPending(this.client, this.sessions);
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
    this.observe(event);
    // The translation sees every event (it keeps message state); the machine gets the turn's.
    const turnEvent = this.translate.translate(event);
    if (!turnEvent) return;
    if (turnEvent.type === "status") this.activity = turnEvent.status;
    this.feed(turnEvent);
  }

  /** Bookkeeping for the caller: messages seen, progress, the requests that block the turn. */
  private observe(event: HubEvent): void {
    switch (event.type) {
      case "conductor.reconnected":
        // Events were lost while the stream was down: read what the server holds now.
        this.seen.complete = false;
        this.schedule(async () => {
          if (!this.machine || this.settled) return;
          const [activity, messages] = await Promise.all([this.readActivity(), readLastTurn(this.client, this.sessionId)]);
          this.resync(activity, messages);
          await this.refreshPending();
        });
        return;
      case "session.created":
      case "session.updated": {
        const info = event.properties.info;
        if (info.parentID && this.sessions.has(info.parentID)) this.sessions.add(info.id);
        return;
      }
      case "session.status": {
        const { sessionID, status } = event.properties;
        if (sessionID !== this.sessionId || status.type === "idle") return;
        if (!this.sawBusy && this.state === "running") this.progress({ kind: "busy", message: "working" });
        this.sawBusy = true;
        if (status.type === "busy") {
          this.retry = undefined;
          return;
        }
        this.retry = { attempt: status.attempt, message: status.message, next: status.next };
        const inS = Math.max(0, Math.round((status.next - Date.now()) / 1000));
        this.progress({ kind: "retry", attempt: status.attempt, nextAt: status.next, reason: status.message, message: `model error, retry ${status.attempt} in ${inS}s: ${status.message}` });
        this.options.onRetry?.(this.retry);
        this.notify();
        return;
      }
      case "permission.asked":
      case "question.asked": {
        if (!this.sessions.has(event.properties.sessionID) || this.settled) return;
        const request = event.type === "permission.asked" ? permissionFrom(event.properties) : questionFrom(event.properties);
        this.pending.set(request.id, request);
        this.progress({ kind: "blocked", request, message: `waiting for an answer: ${describeRequest(request)}` });
        this.notify();
        return;
      }
      case "permission.replied":
      case "question.replied":
      case "question.rejected":
        this.replied(event.properties.requestID);
        return;
      case "message.updated":
        if (event.properties.sessionID === this.sessionId) this.seen.message(event.properties.info);
        return;
      case "message.removed":
        if (event.properties.sessionID === this.sessionId) this.seen.remove(event.properties.messageID);
        return;
      case "message.part.updated":
        if (event.properties.part.sessionID === this.sessionId) this.seen.part(event.properties.part);
        if (this.sessions.has(event.properties.part.sessionID)) this.onPart(event.properties.part);
        return;
      case "message.part.removed":
        if (event.properties.sessionID === this.sessionId) this.seen.remove(event.properties.messageID, event.properties.partID);
        return;
      default:
        return;
    }
  }

  private onPart(part: Schemas["Part"]): void {
    if (part.type !== "tool") return;
    const { status } = part.state;
    if (status === "pending" || this.toolStatus.get(part.callID) === status) return;
    this.toolStatus.set(part.callID, status);
    const title = "title" in part.state && typeof part.state.title === "string" ? part.state.title : undefined;
    this.progress({ kind: "tool", tool: part.tool, status, title, message: `${part.tool} ${status}${title ? `: ${title}` : ""}` });
    if (status === "completed" && FILE_TOOLS.has(part.tool)) {
      const file = filePathOf(part.state.input, part.state.metadata);
      if (file && !this.filesEdited.has(file)) {
        this.filesEdited.add(file);
        this.progress({ kind: "file", file, message: `edited ${file}` });
      }
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
