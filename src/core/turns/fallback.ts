// Model fallback watchdog (docs/opencode-behaviour.md §6). A task tries [model, ...fallbacks]: when the session stays in
// `retry` too long, or its turn ends in a provider error, the watchdog aborts, waits for the idle,
// and prompts the SAME session with the next model (always passing `model`: it is sticky), so
// history and edits carry over. Prompting without the abort would not fall back (the queued prompt
// is dropped), hence the abort first.
//
// The watchdog runs from the task's prompt until its last attempt ends, whether or not anyone
// waits (a `wait: false` task falls back too); it lives in this process only. Waiters follow it
// from one attempt's watch to the next (waitTurn). A failed turn that did no work (no tool call, no
// text: the usual 429/400/unknown model) is deleted and the original task sent again, so the next
// model sees the history exactly as the first one did; a turn that did work is kept and the next
// model is asked to continue it.
import { waitThrough, type BlockedHandler } from "./blocked.js";
import type { CoreContext } from "../context.js";
import { resolveModelRef } from "../catalog/models.js";
import type { HubEvent } from "../event-hub.js";
import type { SessionTranslator, WatchSignal } from "../engine/engine.js";
import { formatModel, type ModelRef } from "../catalog/model-resolve.js";
import { lastTurn, type FallbackRecord, type TurnSummary } from "./summary.js";
import type { SessionMessage } from "./session-message.js";
import { keep } from "./kept-watches.js";
import { TurnWatch, type TurnWaitOptions, type WaitOutcome } from "./watch.js";
import type { RecordedError } from "./record.js";

export interface FallbackPlan {
  /** Model of the first attempt; undefined: the session's default (named from its messages). */
  model?: ModelRef;
  /** Models to switch to, in order. */
  fallbacks: ModelRef[];
  /** How long a run of retries may last before the switch. */
  retryTimeoutMs: number;
  /** Sends the original task again with `model` (same parts, agent, command). */
  resend(model: ModelRef, watch: TurnWatch): Promise<void>;
  agent?: string;
  /** Told each switch, with the model now in use. */
  onFallback?: (record: FallbackRecord, model: ModelRef) => void;
}

export const DEFAULT_RETRY_TIMEOUT_S = 90;

/** Resolves the fallback names up front (an unknown one is a UsageError now, not a surprise later), minus the task's model. */
export async function resolveFallbacks(ctx: CoreContext, names: string[], model: ModelRef | undefined): Promise<ModelRef[]> {
  const refs = await Promise.all(names.map((name) => resolveModelRef(ctx, name)));
  const seen = new Set(model ? [formatModel(model)] : []);
  return refs.filter((ref) => !seen.has(formatModel(ref)) && seen.add(formatModel(ref)));
}

export const CONTINUE_TEXT = "The previous model failed before finishing. Continue the task from where it stopped.";

/**
 * Why a turn's error should make the next model take over, or undefined when it should not: the
 * model or its provider failed (APIError of any status, an unknown model, missing credentials).
 * An abort, a context overflow or a length/content/output error would fail another model too.
 */
export function fallbackReason(e: RecordedError | undefined): string | undefined {
  if (!e) return undefined;
  if (e.name === "APIError") return `APIError${e.statusCode !== undefined ? ` ${e.statusCode}` : ""}: ${e.message}`;
  if (e.name === "ProviderAuthError") return `${e.name}: ${e.message}`;
  if (e.name === "UnknownError" && /model not found/i.test(e.message)) return `${e.name}: ${e.message}`;
  // opencode 2.x names the provider's failures `provider.*` (invalid-request for a 400, rate-limit, internal, …).
  if (e.name.startsWith("provider.") && !/context|length|content|output/i.test(e.name))
    return `${e.name}${e.statusCode !== undefined ? ` ${e.statusCode}` : ""}: ${e.message}`;
  return undefined;
}

/**
 * Times a run of retries. A run starts at its first `retry` status (busy between attempts does not
 * end it) and starts over when the attempt counter does (a later step failing anew) or after a
 * model step finished (`reset`).
 */
export class RetryClock {
  private since: number | undefined;
  private attempt = 0;
  constructor(readonly timeoutMs: number) {}

  /** Records a retry status; returns when the run will have lasted too long. */
  retry(attempt: number, now: number): number {
    if (this.since === undefined || attempt < this.attempt) this.since = now;
    this.attempt = attempt;
    return this.since + this.timeoutMs;
  }

  /** How long the current run has lasted (0 when none). */
  elapsed(now: number): number {
    return this.since === undefined ? 0 : now - this.since;
  }

  reset(): void {
    this.since = undefined;
    this.attempt = 0;
  }
}

/** True when a failed turn left nothing worth keeping: no tool call and no text. */
export function didNothing(replies: SessionMessage[]): boolean {
  return replies.every((m) => m.parts.every((p) => p.type === "step-start" || p.type === "step-finish" || (p.type === "text" && !p.text.trim())));
}

/** `provider/model` the turn ran with, from its messages (when the task named no model). */
export function modelOfTurn(messages: SessionMessage[]): string | undefined {
  const { user, replies } = lastTurn(messages);
  const last = replies.at(-1)?.info;
  if (last?.role === "assistant") return `${last.providerID}/${last.modelID}`;
  return user?.info.role === "user" ? `${user.info.model.providerID}/${user.info.model.modelID}` : undefined;
}

/** The error a summary shows when every model failed: each one with its reason. */
export function exhaustedError(failures: Array<{ model: string; reason: string }>): { name: string; message: string } {
  return { name: "AllModelsFailed", message: `All ${failures.length} models failed: ${failures.map((f) => `${f.model}: ${f.reason}`).join("; ")}` };
}

/** The watchdog follows its own session only (a sub-agent's retries are not the task's). */
const ONLY_ITSELF: ReadonlySet<string> = new Set();

// Watchdogs by event hub (contexts scoped to a session's directory share it), then session.
const watchdogs = new WeakMap<object, Map<string, Watchdog>>();

function watchdogsOf(ctx: CoreContext): Map<string, Watchdog> {
  let map = watchdogs.get(ctx.hub);
  if (!map) watchdogs.set(ctx.hub, (map = new Map()));
  return map;
}

/** Starts watching `watch`'s session (before its prompt), then runs `send`. */
export async function startWatchdog(ctx: CoreContext, watch: TurnWatch, plan: FallbackPlan, send: () => Promise<void>): Promise<void> {
  const dog = new Watchdog(ctx, watch, plan);
  await dog.start();
  try {
    await send();
  } catch (error) {
    dog.stop();
    throw error;
  }
}

class Watchdog {
  readonly records: FallbackRecord[] = [];
  readonly failures: Array<{ model: string; reason: string }> = [];
  /** The user message of the last attempt once it ended: summaries of that turn carry the records. */
  lastUserId: string | undefined;
  exhausted = false;
  active = true;
  private current: TurnWatch;

  /** The watch of the attempt in progress (or just ended, while the next one is being sent). */
  get attempt(): TurnWatch {
    return this.current;
  }
  private model: ModelRef | undefined;
  private readonly queue: ModelRef[];
  private readonly attempts = new WeakSet<TurnWatch>();
  private readonly decisions = new WeakMap<TurnWatch, Promise<TurnWatch | undefined>>();
  private readonly clock: RetryClock;
  private status: "busy" | "retry" | "idle" = "busy";
  private lastRetry: { attempt: number; message: string } | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Why the watchdog aborted the current attempt. */
  private tripped: string | undefined;
  private unsubscribe: (() => void) | undefined;
  private translator: SessionTranslator | undefined;

  constructor(
    private readonly ctx: CoreContext,
    watch: TurnWatch,
    private readonly plan: FallbackPlan,
  ) {
    this.current = watch;
    this.model = plan.model;
    this.queue = [...plan.fallbacks];
    this.clock = new RetryClock(plan.retryTimeoutMs);
  }

  get sessionId(): string {
    return this.current.sessionId;
  }

  async start(): Promise<void> {
    this.translator = (await this.ctx.engine.watchKit(this.sessionId)).translator;
    this.unsubscribe = await this.ctx.hub.subscribe(
      (event) => this.onEvent(event),
      () => this.stop(),
    );
    const map = watchdogsOf(this.ctx);
    map.get(this.sessionId)?.stop(); // a newer task on the session takes over
    map.set(this.sessionId, this);
    this.follow(this.current);
  }

  stop(): void {
    this.active = false;
    clearTimeout(this.timer);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    const map = watchdogsOf(this.ctx);
    if (map.get(this.sessionId) === this && this.records.length === 0) map.delete(this.sessionId);
  }

  follows(watch: TurnWatch): boolean {
    return this.attempts.has(watch);
  }

  /** What follows `watch`'s end: the next attempt's watch, or undefined when the task is over. */
  decisionOn(watch: TurnWatch): Promise<TurnWatch | undefined> | undefined {
    return this.decisions.get(watch);
  }

  private follow(watch: TurnWatch): void {
    this.attempts.add(watch);
    watch.onSettled(() => {
      const decision = this.decide(watch);
      decision.catch(() => undefined); // waiters see the error; nobody waiting is fine too
      this.decisions.set(watch, decision);
    });
  }

  private onEvent(event: HubEvent): void {
    for (const signal of this.translator?.translate(event, ONLY_ITSELF) ?? []) this.onSignal(signal);
  }

  private onSignal(signal: WatchSignal): void {
    // A finished model step ends any run of retries.
    if (signal.kind === "step-finished") return this.clock.reset();
    if (signal.kind === "turn" && signal.event.type === "status" && signal.event.status !== "retry") {
      this.status = signal.event.status;
      if (this.status === "idle") clearTimeout(this.timer);
      return;
    }
    if (signal.kind !== "retry") return;
    this.status = "retry";
    // The last model keeps opencode's own retries: giving up early would gain nothing.
    if (!this.active || this.tripped || this.queue.length === 0) return;
    this.lastRetry = { attempt: signal.attempt, message: signal.message };
    const now = Date.now();
    const due = this.clock.retry(signal.attempt, now);
    clearTimeout(this.timer);
    if (now >= due) return this.trip();
    this.timer = setTimeout(() => this.status === "retry" && this.trip(), due - now);
    this.timer.unref();
  }

  /** Aborts the attempt; its end (the abort's idle) then leads to the switch. */
  private trip(): void {
    if (!this.active || this.tripped) return;
    const seconds = Math.round(this.clock.elapsed(Date.now()) / 100) / 10;
    const last = this.lastRetry ? ` (retry ${this.lastRetry.attempt}: ${this.lastRetry.message})` : "";
    this.tripped = `still retrying after ${seconds} s${last}`;
    const watch = this.current;
    this.ctx.engine.abort(this.sessionId).catch((error: unknown) => watch.fail(error));
  }

  private async decide(watch: TurnWatch): Promise<TurnWatch | undefined> {
    clearTimeout(this.timer);
    if (!this.active || watch !== this.current) return undefined;
    const verdict = watch.verdict;
    if (!watch.ended || !verdict || verdict.status === "lost") {
      this.stop(); // the watch failed or the server went away: nothing to decide on
      return undefined;
    }
    const messages = watch.messages ?? (await this.ctx.engine.lastTurn(this.sessionId));
    const { user, replies } = lastTurn(messages);
    const succeeded = verdict.status === "done" && replies.length > 0 && !didNothing(replies);
    // The turn's recorded error is a reason to switch, fast (a 400) or slow (retries run out), as is our own abort on the retry timeout.
    const reason = this.tripped && !succeeded ? this.tripped : verdict.status === "error" ? fallbackReason(verdict.error) : undefined;
    const from = this.model ? formatModel(this.model) : (modelOfTurn(messages) ?? "default model");
    const next = reason ? this.queue.shift() : undefined;
    if (reason) this.failures.push({ model: from, reason });
    if (!next) {
      this.exhausted = reason !== undefined;
      this.lastUserId = user?.info.id;
      this.stop();
      return undefined;
    }
    return this.switchTo(watch, messages, { from, to: formatModel(next), reason: reason!, at: new Date().toISOString() }, next);
  }

  private async switchTo(old: TurnWatch, messages: SessionMessage[], record: FallbackRecord, next: ModelRef): Promise<TurnWatch> {
    const { engine } = this.ctx;
    const { user, replies } = lastTurn(messages);
    let resend = didNothing(replies);
    if (resend) {
      // Newest first, so the session never holds a reply without its user message.
      for (const m of [...replies].reverse().concat(user ? [user] : [])) {
        resend = await engine.deleteMessage(this.sessionId, m.info.id).catch(() => false);
        if (!resend) break; // the task is still in the history: ask to continue rather than send it twice
      }
    }
    const watch = await TurnWatch.start(engine, this.ctx.hub, this.sessionId);
    for (const file of old.filesEdited) watch.filesEdited.add(file);
    watch.prompted(messages.at(-1)?.info.id);
    this.current = watch;
    this.model = next;
    this.tripped = undefined;
    this.lastRetry = undefined;
    this.status = "busy";
    this.clock.reset();
    this.records.push(record);
    this.follow(watch);
    keep(this.ctx, watch); // later waits and result() find the new attempt
    try {
      this.plan.onFallback?.(record, next);
    } catch {
      // a failing listener must not stop the task
    }
    old.onProgress?.({
      kind: "fallback",
      from: record.from,
      to: record.to,
      reason: record.reason,
      message: `model ${record.from} failed (${record.reason}); switching to ${record.to}`,
    });
    try {
      if (resend) await this.plan.resend(next, watch);
      else await this.promptContinue(next);
    } catch (error) {
      watch.fail(error);
    }
    old.close();
    return watch;
  }

  private async promptContinue(model: ModelRef): Promise<void> {
    await this.ctx.engine.prompt(this.sessionId, { text: CONTINUE_TEXT, model, ...(this.plan.agent ? { agent: this.plan.agent } : {}) }, () => undefined);
  }
}

/**
 * Waits for the turn `at.watch` follows and, when a watchdog switches models, for the next
 * attempt; `at.watch` ends as the last attempt's watch. Without a watchdog: a plain wait.
 */
export async function waitTurn(ctx: CoreContext, at: { watch: TurnWatch }, options: TurnWaitOptions & { onBlocked?: BlockedHandler }): Promise<WaitOutcome> {
  const first = at.watch;
  const onProgress = first.onProgress;
  const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
  const left = () => (deadline === undefined ? undefined : Math.max(0, deadline - Date.now()));
  try {
    while (true) {
      const outcome = await waitThrough(at.watch, { ...options, timeoutMs: left() });
      if (outcome !== "idle") return outcome;
      const dog = watchdogsOf(ctx).get(at.watch.sessionId);
      const decision = dog?.follows(at.watch) ? dog.decisionOn(at.watch) : undefined;
      if (!decision) return outcome;
      const next = await within(decision, options.signal, left());
      if (next === "timeout" || next === "cancelled") return next;
      if (!next) return "idle";
      at.watch = next;
      next.onProgress = onProgress;
    }
  } finally {
    if (at.watch !== first) at.watch.onProgress = undefined;
  }
}

function within<T>(promise: Promise<T>, signal: AbortSignal | undefined, ms: number | undefined): Promise<T | "timeout" | "cancelled"> {
  if (signal?.aborted) return Promise.resolve("cancelled");
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", cancel);
    };
    const cancel = () => {
      done();
      resolve("cancelled");
    };
    const timer = ms === undefined ? undefined : setTimeout(() => (done(), resolve("timeout")), ms);
    signal?.addEventListener("abort", cancel, { once: true });
    promise.then(
      (value) => (done(), resolve(value)),
      (error: unknown) => (done(), reject(error)),
    );
  });
}

/** Adds the session's model switches to a summary of the watched task's turn. */
/**
 * The attempt a watchdog of this session is on while it still switches models: its watch may have
 * ended a moment ago with the next attempt not yet sent, and a waiter must follow it, not read the
 * session as idle.
 */
export function switchingAttempt(ctx: CoreContext, sessionId: string): TurnWatch | undefined {
  const dog = watchdogsOf(ctx).get(sessionId);
  return dog?.active ? dog.attempt : undefined;
}

export function withFallbacks(ctx: CoreContext, summary: TurnSummary, messages: SessionMessage[]): TurnSummary {
  const dog = watchdogsOf(ctx).get(summary.sessionId);
  if (!dog || (dog.records.length === 0 && !dog.exhausted)) return summary;
  // Only the watched task's turn: a later turn on the session has its own user message.
  if (!dog.active && lastTurn(messages).user?.info.id !== dog.lastUserId) return summary;
  const out: TurnSummary = { ...summary, fallbacks: [...dog.records] };
  if (dog.exhausted && summary.status === "error") out.error = exhaustedError(dog.failures);
  return out;
}
