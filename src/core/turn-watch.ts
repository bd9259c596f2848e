// Waits for a session's turn to end, from the event stream (notes §2). Subscribe before prompting.
// Every idle (`session.idle` or status idle) is checked against the messages before it counts:
// error turns emit two idles, aborting an idle session emits one, a turn queued behind another
// sees the first one's busy, so only "the newest message answers our prompt" ends a turn. After a
// reconnect the status is re-read so no end is missed.
import type { OpencodeClient } from "../client/connect.js";
import type { Schemas } from "../client/types.js";
import { describeRequest, listPending, permissionFrom, questionFrom, type PendingRequest } from "./approvals.js";
import type { EventSource, HubEvent } from "./event-hub.js";
import { FILE_TOOLS, filePathOf, turnOver, type SessionMessage } from "./summary.js";
import { readLastTurn, SeenMessages } from "./turn-messages.js";

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

/** A prompt sent by someone else this recently may still be about to turn busy (notes §2: up to ~0.6 s, more under load). */
const START_GRACE_MS = 10_000;

export class TurnWatch {
  /** Sessions whose requests block this one: itself and sub-agent children seen while watching. */
  readonly sessions: Set<string>;
  readonly pending = new Map<string, PendingRequest>();
  readonly filesEdited = new Set<string>();
  retry: { attempt: number; message: string; next: number } | undefined;
  /** The last `session.error` of the session (some errors leave no assistant message). */
  sessionError: NonNullable<Schemas["EventSessionError"]["properties"]["error"]> | undefined;
  /** The session's last turn as read when its end was confirmed (the summary reuses it). */
  messages: SessionMessage[] | undefined;
  private failure: unknown;
  /** unknown: nobody told us whether a turn runs (attach on the first wait). */
  private state: "unknown" | "running" | "ended" = "unknown";
  /** Newest message id before our prompt: the turn's user message comes after it. */
  private after: string | undefined;
  private errorSincePrompt = false;
  /** The session's messages as events told them since we subscribed (complete for a turn we prompted). */
  private readonly seen = new SeenMessages();
  private promptedByUs = false;
  private sawBusy = false;
  private idleCheckQueued = false;
  private graceTimer: NodeJS.Timeout | undefined;
  private readonly wakers = new Set<() => void>();
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
    this.promptedByUs = true;
    this.after = after;
    this.errorSincePrompt = false;
    this.sawBusy = false;
    this.messages = undefined;
    clearTimeout(this.graceTimer);
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
    clearTimeout(this.graceTimer);
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

  /** Waiting on a session we did not prompt: its current status decides, helped by its messages. */
  private async attach(): Promise<void> {
    if (this.state !== "unknown") return;
    this.state = "running";
    const status = (await this.client.call("session.status"))[this.sessionId];
    if (status && status.type !== "idle") {
      this.sawBusy = true;
      if (status.type === "retry") this.retry = { attempt: status.attempt, message: status.message, next: status.next };
      return;
    }
    const messages = await readLastTurn(this.client, this.sessionId).catch(() => undefined);
    const newest = messages?.at(-1)?.info;
    const age = newest?.role === "user" ? Date.now() - newest.time.created : Infinity;
    if (!messages || turnOver(messages) || age >= START_GRACE_MS) return this.end(messages);
    // A prompt sent a moment ago whose busy is still to come: events decide, or a second look at the end of the grace.
    this.graceTimer = setTimeout(() => this.schedule(() => this.recheck()), START_GRACE_MS - age);
    this.graceTimer.unref();
  }

  private async recheck(): Promise<void> {
    if (this.state !== "running" || this.sawBusy) return;
    const status = (await this.client.call("session.status"))[this.sessionId];
    if (!status || status.type === "idle") this.end(await readLastTurn(this.client, this.sessionId).catch(() => undefined));
  }

  /** Merges the server's list: drops what was answered, keeps what was asked meanwhile. */
  private async refreshPending(): Promise<void> {
    const known = new Set(this.pending.keys());
    const open = await listPending(this.client, this.sessions);
    const openIds = new Set(open.map((r) => r.id));
    for (const id of known) if (!openIds.has(id)) this.pending.delete(id);
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

  private end(messages: SessionMessage[] | undefined): void {
    if (this.settled) return;
    this.state = "ended";
    this.messages = messages;
    this.pending.clear();
    clearTimeout(this.graceTimer);
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
    switch (event.type) {
      case "conductor.reconnected":
        // Events were lost while the stream was down: re-read what matters.
        this.seen.complete = false;
        this.schedule(async () => {
          const status = (await this.client.call("session.status"))[this.sessionId];
          if (!status || status.type === "idle") await this.checkIdle();
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
        if (sessionID !== this.sessionId) return;
        if (status.type === "idle") return this.onIdle();
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
      case "session.error":
        if (event.properties.sessionID !== this.sessionId) return;
        if (event.properties.error) this.sessionError = event.properties.error;
        if (this.state === "running") this.errorSincePrompt = true;
        return;
      case "session.idle":
        if (event.properties.sessionID === this.sessionId) this.onIdle();
        return;
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
        this.pending.delete(event.properties.requestID);
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

  /** `session.status idle` and `session.idle` come in pairs: one check covers both. */
  private onIdle(): void {
    if (this.state !== "running" || this.idleCheckQueued) return;
    this.idleCheckQueued = true;
    this.schedule(async () => {
      this.idleCheckQueued = false;
      await this.checkIdle();
    });
  }

  private async checkIdle(): Promise<void> {
    if (this.state !== "running") return;
    // The events already told the whole turn (they come with the idle): no read needed. An error
    // turn's error lands on its message only after the first idle, so errors take the read.
    if (this.promptedByUs && this.seen.complete && !this.errorSincePrompt) {
      const seen = this.seen.list();
      if (turnOver(seen, this.after)) return this.end(seen);
    }
    const messages = await readLastTurn(this.client, this.sessionId).catch((error: unknown) => {
      this.fail(error); // better a clear error than a wait that never ends
      return undefined;
    });
    if (!messages) return;
    // An error can end the loop with no answer at all (unknown model, a dropped queued prompt).
    if (turnOver(messages, this.after) || this.errorSincePrompt) this.end(messages);
  }

  /** Runs checks one after another so their reads and the wait loop see a consistent state. */
  private schedule(check: () => Promise<void>): void {
    this.checks = this.checks
      .then(check)
      .catch(() => undefined)
      .then(() => this.notify());
  }
}
