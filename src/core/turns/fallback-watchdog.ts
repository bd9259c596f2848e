// Model fallback watchdog (docs/opencode-behaviour.md §6); what to switch to and when is the policy
// in turns/fallback-policy.ts. A task tries [model, ...fallbacks]: when the session stays in
// `retry` too long, or its turn ends in a provider error, the watchdog aborts, waits for the idle,
// and prompts the SAME session with the next model (always passing `model`: it is sticky), so
// history and edits carry over. Prompting without the abort would not fall back (the queued prompt
// is dropped), hence the abort first.
//
// The watchdog runs from the task's prompt until its last attempt ends, whether or not anyone
// waits (a `wait: false` task falls back too); it lives in this process only. Waiters follow it
// from one attempt's watch to the next (waitTurn, turns/fallback-wait.ts). A failed turn that did no work (no tool call, no
// text: the usual 429/400/unknown model) is deleted and the original task sent again, so the next
// model sees the history exactly as the first one did; a turn that did work is kept and the next
// model is asked to continue it.
import type { CoreContext } from "../context.js";
import type { HubEvent } from "../event-hub.js";
import type { SessionTranslator, WatchSignal } from "../engine/engine.js";
import { formatModel, type ModelRef } from "../catalog/model-resolve.js";
import { lastTurn, type FallbackRecord } from "./summary.js";
import type { Message } from "../model/message.js";
import { keep } from "./kept-watches.js";
import { TurnWatch } from "./watch.js";
import { CONTINUE_TEXT, didNothing, fallbackReason, modelOfTurn, RetryClock, type FallbackPlan } from "./fallback-policy.js";

/** The watchdog follows its own session only (a sub-agent's retries are not the task's). */
const ONLY_ITSELF: ReadonlySet<string> = new Set();

// Watchdogs by event hub (contexts scoped to a session's directory share it), then session.
const watchdogs = new WeakMap<object, Map<string, Watchdog>>();

/** The watchdog of a session (the last one started there), while it runs or once it switched models. */
export function watchdogOf(ctx: CoreContext, sessionId: string): Watchdog | undefined {
  return watchdogsOf(ctx).get(sessionId);
}

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

export class Watchdog {
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
      (id) => id === this.sessionId,
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

  private async switchTo(old: TurnWatch, messages: Message[], record: FallbackRecord, next: ModelRef): Promise<TurnWatch> {
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
