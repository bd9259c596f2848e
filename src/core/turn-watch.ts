// Waits for a session's turn to end, from the event stream (notes §2): subscribe before prompting;
// the end is `session.idle` (or status idle) of that session, de-duplicated; an idle without a
// preceding busy (an abort of an idle session, the second idle of an error turn) is confirmed from
// the messages; after a reconnect the status is re-read so no end is missed.
import type { OpencodeClient } from "../client/connect.js";
import type { Schemas } from "../client/types.js";
import { describeRequest, listPending, permissionFrom, questionFrom, type PendingRequest } from "./approvals.js";
import type { EventHub, HubEvent } from "./event-hub.js";

export type TurnProgress =
  | { kind: "busy"; message: string }
  | { kind: "tool"; tool: string; status: "running" | "completed" | "error"; title?: string; message: string }
  | { kind: "file"; file: string; message: string }
  | { kind: "retry"; attempt: number; nextAt: number; reason: string; message: string }
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

const FILE_TOOLS = new Set(["write", "edit", "apply_patch", "patch", "multiedit"]);

export class TurnWatch {
  /** Sessions whose requests block this one: itself and sub-agent children seen while watching. */
  readonly sessions: Set<string>;
  readonly pending = new Map<string, PendingRequest>();
  readonly filesEdited = new Set<string>();
  retry: { attempt: number; message: string; next: number } | undefined;
  /** The last `session.error` of the session (some errors leave no assistant message). */
  sessionError: NonNullable<Schemas["EventSessionError"]["properties"]["error"]> | undefined;
  private failure: unknown;
  private promptedAt: number | undefined;
  private sawBusy = false;
  private ended = false;
  private wake: (() => void) | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly toolStatus = new Map<string, string>();
  private checks: Promise<void> = Promise.resolve();

  private constructor(
    private readonly client: OpencodeClient,
    readonly sessionId: string,
    private readonly options: TurnWatchOptions,
  ) {
    this.sessions = new Set([sessionId]);
  }

  /** Subscribes (and waits until the subscription is live) before the caller prompts. */
  static async start(client: OpencodeClient, hub: EventHub, sessionId: string, options: TurnWatchOptions = {}): Promise<TurnWatch> {
    const watch = new TurnWatch(client, sessionId, options);
    watch.unsubscribe = await hub.subscribe((event) => watch.onEvent(event));
    return watch;
  }

  /** Call right before sending a prompt: from now on the turn's idle ends the wait. */
  prompted(): void {
    this.promptedAt = Date.now();
    this.sawBusy = false;
    this.ended = false;
  }

  /** Ends the wait with an error, e.g. when the prompt request itself failed. */
  fail(error: unknown): void {
    this.failure = error;
    this.notify();
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.wake?.();
  }

  async wait(options: TurnWaitOptions = {}): Promise<WaitOutcome> {
    const returnOnBlocked = options.returnOnBlocked ?? true;
    if (this.promptedAt === undefined) await this.attach();
    else if (this.ended) return "idle";
    if (returnOnBlocked && !this.ended && this.pending.size === 0) await this.refreshPending();

    const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
    while (true) {
      if (this.failure !== undefined) throw this.failure;
      if (this.ended) return "idle";
      if (returnOnBlocked && this.pending.size > 0) return "blocked";
      if (options.signal?.aborted) return "cancelled";
      const left = deadline === undefined ? undefined : deadline - Date.now();
      if (left !== undefined && left <= 0) return "timeout";
      await this.sleepUntilEvent(left, options.signal);
      await this.checks;
    }
  }

  /** Waiting on a session we did not prompt: its current status decides. */
  private async attach(): Promise<void> {
    this.promptedAt = Date.now();
    const statuses = await this.client.call("session.status");
    const status = statuses[this.sessionId];
    if (!status || status.type === "idle") this.ended = true;
    else this.sawBusy = true;
    if (status?.type === "retry") this.retry = { attempt: status.attempt, message: status.message, next: status.next };
  }

  private async refreshPending(): Promise<void> {
    for (const request of await listPending(this.client, this.sessions)) this.pending.set(request.id, request);
  }

  private sleepUntilEvent(ms: number | undefined, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.wake = undefined;
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
      this.wake = done;
    });
  }

  private notify(): void {
    this.wake?.();
  }

  private progress(p: TurnProgress): void {
    try {
      this.options.onProgress?.(p);
    } catch {
      // a failing progress consumer must not break the wait
    }
  }

  private onEvent(event: HubEvent): void {
    switch (event.type) {
      case "conductor.reconnected":
        // Events were lost while the stream was down: re-read what matters.
        this.schedule(async () => {
          const statuses = await this.client.call("session.status");
          const status = statuses[this.sessionId];
          if (!status || status.type === "idle") await this.onIdle();
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
        if (status.type === "busy") {
          if (!this.sawBusy) this.progress({ kind: "busy", message: "working" });
          this.sawBusy = true;
          this.retry = undefined;
        } else if (status.type === "retry") {
          this.sawBusy = true;
          this.retry = { attempt: status.attempt, message: status.message, next: status.next };
          this.progress({
            kind: "retry",
            attempt: status.attempt,
            nextAt: status.next,
            reason: status.message,
            message: `model error, retry ${status.attempt} in ${Math.max(0, Math.round((status.next - Date.now()) / 1000))}s: ${status.message}`,
          });
          this.options.onRetry?.(this.retry);
          this.notify();
        } else if (status.type === "idle") {
          this.schedule(() => this.onIdle());
        }
        return;
      }
      case "session.error":
        if (event.properties.sessionID === this.sessionId && event.properties.error) this.sessionError = event.properties.error;
        return;
      case "session.idle":
        if (event.properties.sessionID === this.sessionId) this.schedule(() => this.onIdle());
        return;
      case "permission.asked":
      case "question.asked": {
        if (!this.sessions.has(event.properties.sessionID)) return;
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
      case "message.part.updated":
        if (this.sessions.has(event.properties.part.sessionID)) this.onPart(event.properties.part);
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
    this.checks = this.checks.then(check).catch(() => undefined).then(() => this.notify());
  }

  private async onIdle(): Promise<void> {
    if (this.ended || this.promptedAt === undefined) return;
    if (this.sawBusy || (await this.lastTurnFinishedSince(this.promptedAt))) {
      this.ended = true;
      this.pending.clear();
    }
  }

  /** An idle with no busy before it counts only if an assistant message finished after our prompt. */
  private async lastTurnFinishedSince(since: number): Promise<boolean> {
    const messages = await this.client.call("session.messages", { path: { sessionID: this.sessionId }, query: { limit: 2 } });
    const last = messages.at(-1)?.info;
    if (!last || last.role !== "assistant") return false;
    return last.time.created >= since - 1_000 && (last.time.completed !== undefined || last.error !== undefined);
  }
}

export function filePathOf(input: Record<string, unknown>, metadata?: Record<string, unknown>): string | undefined {
  for (const value of [input.filePath, input.path, metadata?.filepath, metadata?.filePath]) {
    if (typeof value === "string" && value) return value;
  }
  return undefined;
}
