// Working with a session that already runs: send it more, interrupt it, wait for it, read its state.
import { Budget } from "./governance/budget.js";
import type { CoreContext } from "./context.js";
import { resolveModelRef } from "./catalog/models.js";
import { quoted, UsageError } from "./errors.js";
import { validPromptText } from "./inputs/prompt-text.js";
import { DEFAULT_RETRY_TIMEOUT_S, resolveFallbacks } from "./turns/fallback-policy.js";
import { startWatchdog } from "./turns/fallback-watchdog.js";
import type { FallbackRecord } from "./turns/summary.js";
import type { ModelRef } from "./catalog/model-resolve.js";
import { sessionScope } from "./sessions/scope.js";
import type { TurnSummary } from "./turns/summary.js";
import { runningWatch } from "./turns/kept-watches.js";
import { rejectLeftRequests } from "./turns/left-requests.js";
import { runTurn, summarizeSession, unreachableSummary, waitForSession, type WaitOptions } from "./turns/turn.js";
import { Deadline, isNoAnswer, unreachableMessage } from "./turns/deadline.js";

import type { Delivery } from "./engine/engine.js";

export type { Delivery };

export interface SendOptions extends WaitOptions {
  /**
   * `queue` (default): the message runs after the current turn. `steer`: on opencode 2.x the
   * message joins the running turn and the next model call sees it; opencode 1.x cannot inject a
   * message into a running turn, so there the turn is interrupted and the session continues with
   * this message (history kept). 1.x drops queued messages when the running turn ends in an error.
   */
  delivery?: Delivery;
  /** Wait for the turn this message starts. Default: true for `steer`, false for `queue`. */
  wait?: boolean;
  model?: string;
  agent?: string;
  /** Models to switch to when the model keeps failing (default: settings.fallbackModels), as in delegate. */
  fallbackModels?: string[];
  retryTimeoutMs?: number;
  onFallback?: (record: FallbackRecord) => void;
  /** Told once opencode has taken the message (before the wait), e.g. to put it on record as sent; with the id opencode gave it, when it names one (2.x). */
  onSent?: (inputId: string | undefined) => Promise<void>;
}

export async function send(base: CoreContext, sessionId: string, message: string, o: SendOptions = {}): Promise<TurnSummary & { delivery: Delivery }> {
  if (typeof message !== "string" || !message.trim()) throw new UsageError("`message` is empty: say what the agent should do next.");
  validPromptText(message, "message");
  const delivery = o.delivery ?? "queue";
  if (delivery !== "queue" && delivery !== "steer") throw new UsageError(`Unknown delivery ${quoted(delivery)}: use queue or steer.`);
  const ctx = await sessionScope(base, sessionId);
  const remembered = ctx.sessionDefaults?.get(sessionId);
  const modelInput = o.model ?? remembered?.model;
  const agent = o.agent ?? remembered?.agent;
  const model = modelInput ? await resolveModelRef(ctx, modelInput) : undefined;
  const fallbacks = await resolveFallbacks(ctx, o.fallbackModels ?? ctx.settings.fallbackModels ?? [], model);
  // opencode 2.x steers for real (the next model call sees the message); 1.x can only stop the turn and go on.
  const capabilities = await ctx.engine.capabilities();
  if (delivery === "steer" && !capabilities.nativeSteer) await stopTurn(ctx, sessionId);
  let told = false;
  const prompt = (m: ModelRef | undefined) => async () => {
    let inputId: string | undefined;
    const onAdmitted = (id: string) => void (inputId = id);
    await ctx.engine.prompt(sessionId, { text: message, ...(m ? { model: m } : {}), ...(agent ? { agent } : {}), delivery, onAdmitted }, () => undefined);
    if (told) return;
    told = true;
    await o.onSent?.(inputId);
  };
  // The fallback watchdog follows a turn this message starts; a message queued behind a running turn
  // would leave it watching someone else's turn, so that one goes without.
  const ownsTurn = fallbacks.length > 0 && (delivery === "steer" || !(await isBusy(ctx, sessionId)));
  const retryTimeoutMs = o.retryTimeoutMs ?? (ctx.settings.retryTimeoutS ?? DEFAULT_RETRY_TIMEOUT_S) * 1000;
  const plan = { model, fallbacks, retryTimeoutMs, agent, resend: (m: ModelRef) => prompt(m)(), onFallback: (r: FallbackRecord) => o.onFallback?.(r) };
  const start = ownsTurn ? (watch: Parameters<typeof startWatchdog>[1]) => startWatchdog(ctx, watch, plan, prompt(model)) : prompt(model);
  const summary = await runTurn(ctx, sessionId, start, { ...o, wait: o.wait ?? delivery === "steer" });
  return { ...summary, delivery };
}

async function isBusy(ctx: CoreContext, sessionId: string): Promise<boolean> {
  const status = await ctx.engine.runState(sessionId);
  return status.type !== "idle" || runningWatch(ctx, sessionId) !== undefined;
}

/** Aborts the session's current turn and waits until it has stopped. */
export async function interrupt(base: CoreContext, sessionId: string, o: Pick<WaitOptions, "detail"> = {}): Promise<TurnSummary & { wasRunning: boolean }> {
  const ctx = await sessionScope(base, sessionId);
  const watch = runningWatch(ctx, sessionId);
  const wasRunning = await stopTurn(ctx, sessionId);
  // A turn this process follows ends on the machine's verdict (2.x: the outcome event), not on a
  // read that may come before the server has written the stopped step.
  if (watch && !watch.settled) await watch.wait({ timeoutMs: STOP_TIMEOUT_MS, returnOnBlocked: false }).catch(() => undefined);
  const summary = await summarizeSession(ctx, sessionId, { outcome: "idle", ...(watch?.ended ? { watch } : {}), detail: o.detail });
  return { ...summary, wasRunning };
}

/** Waits for the session's current turn (or returns the last one when idle), within `timeoutMs` whatever the server does. */
export async function wait(base: CoreContext, sessionId: string, o: WaitOptions = {}): Promise<TurnSummary> {
  const deadline = Deadline.after(o.timeoutMs);
  let ctx: CoreContext;
  try {
    ctx = await deadline.read(sessionScope(base, sessionId), "session.get");
  } catch (error) {
    if (!isNoAnswer(error)) throw error;
    return unreachableSummary(base, sessionId, runningWatch(base, sessionId), unreachableMessage(base.engine.url, error), o.detail);
  }
  const summary = await waitForSession(ctx, sessionId, o, deadline);
  // A turn stopped by its budget says so, whoever waits for it.
  return Budget.exceededFor(ctx, summary)?.apply(summary) ?? summary;
}

export interface SessionState {
  sessionId: string;
  /** What the session does right now; `unreachable`: opencode did not answer the reads (see `last`). */
  state: "idle" | "busy" | "retry" | "unreachable";
  retry?: { attempt: number; message: string; nextAt: number };
  /** The last turn (status `running` or `blocked` while it goes on). */
  last: TurnSummary;
}

/**
 * How long result()'s first reads (the session, its status) may take before it answers
 * `unreachable`: quick on a server that answers. Once they are answered, the summary's reads have
 * the client's timeouts (a turn idle without a recorded end still waits for the machine's re-reads).
 */
export const RESULT_READ_MS = 10_000;

/** The session's state without waiting for its turn (a server that does not answer: `unreachable` within RESULT_READ_MS plus the answer margin). */
export async function result(base: CoreContext, sessionId: string, o: Pick<WaitOptions, "detail"> = {}): Promise<SessionState> {
  const deadline = Deadline.after(RESULT_READ_MS);
  try {
    const ctx = await deadline.read(sessionScope(base, sessionId), "session.get");
    const status = await deadline.read(ctx.engine.runState(sessionId), "the session's status");
    const watch = runningWatch(ctx, sessionId);
    // A prompt accepted a moment ago is not busy yet (docs/opencode-behaviour.md §2), but this process knows it runs.
    const state = status.type !== "idle" ? status.type : watch ? "busy" : "idle";
    const read = await summarizeSession(ctx, sessionId, { outcome: state === "idle" ? "idle" : "timeout", watch, detail: o.detail });
    const last = Budget.exceededFor(ctx, read)?.apply(read) ?? read;
    if (last.pending && last.pending.length > 0) last.status = "blocked";
    return {
      sessionId,
      state: last.status === "unreachable" ? "unreachable" : state,
      ...(status.type === "retry" ? { retry: { attempt: status.attempt, message: status.message, nextAt: status.next } } : {}),
      last,
    };
  } catch (error) {
    if (!isNoAnswer(error)) throw error;
    const last = unreachableSummary(base, sessionId, runningWatch(base, sessionId), unreachableMessage(base.engine.url, error), o.detail);
    return { sessionId, state: "unreachable", last };
  }
}

const STOP_TIMEOUT_MS = 30_000;
const NONE: ReadonlySet<string> = new Set();

/**
 * Aborts a running turn and resolves once the session is idle, with no request of it or its
 * sub-agents left open; false if nothing was running. An idle session is not aborted: that would
 * emit an idle that other waiters could take for a turn end. opencode ends the sub-agents' turns
 * with the parent's (docs/opencode-behaviour.md §6), so they are not aborted one by one.
 */
async function stopTurn(ctx: CoreContext, sessionId: string): Promise<boolean> {
  let stopped!: () => void;
  const idle = new Promise<void>((resolve) => (stopped = resolve));
  // Subscribe before aborting: the abort's idle follows within milliseconds (docs/opencode-behaviour.md §6).
  const { translator } = await ctx.engine.watchKit(sessionId);
  const unsubscribe = await ctx.hub.subscribe(
    (event) => {
      if (translator.translate(event, NONE).some((s) => s.kind === "turn" && s.event.type === "status" && s.event.status === "idle")) stopped();
    },
    undefined,
    (id) => id === sessionId,
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    const status = await ctx.engine.runState(sessionId);
    if (status.type === "idle" && !runningWatch(ctx, sessionId)) return false;
    await ctx.engine.abort(sessionId);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new Error(`Session ${sessionId} did not stop within ${STOP_TIMEOUT_MS / 1000} s of the abort; read its state again to see where it stands.`)),
        STOP_TIMEOUT_MS,
      );
    });
    await Promise.race([idle, timeout]);
    // A sub-agent's request the abort left listed (1.x) would still run its tool if approved later.
    await rejectLeftRequests(ctx.engine, sessionId).catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(
        `Session ${sessionId} stopped, but the requests it left open could not be rejected (${reason}): list them with pending and reject them, or approving one may still run its tool.`,
        { cause: error },
      );
    });
    return true;
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}
