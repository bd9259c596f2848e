// Turns as the core uses them: send something and wait for the turn it starts, attach to a running
// turn, and summarise the session's last turn. Waiting is event-driven (see turns/watch.ts).
// A turn still running when its caller stops waiting (timeout, `wait: false`, blocked) keeps its
// watch, so a later wait() picks up where it was (the files it saw, the requests that block it).
import type { BlockedHandler } from "./blocked.js";
import type { CoreContext } from "../context.js";
import { switchingAttempt, waitTurn, withFallbacks } from "./fallback-wait.js";
import { recordedVerdict, summarizeTurn, type Detail, type FileDiff, type TurnSummary } from "./summary.js";
import { keep, runningWatch } from "./kept-watches.js";
import { TurnWatch } from "./watch.js";
import type { WaitOutcome } from "./watch-wait.js";
import type { TurnProgress } from "./turn-progress.js";

export interface WaitOptions {
  /** Stop waiting after this long and answer `running`; the turn goes on. Default: no limit. */
  timeoutMs?: number;
  signal?: AbortSignal;
  detail?: Detail;
  onProgress?: (progress: TurnProgress) => void;
  /** Answer `blocked` as soon as a permission or question waits (default true). */
  returnOnBlocked?: boolean;
  /** Handles each permission request or question (answer it, or give it back as `blocked`). */
  onBlocked?: BlockedHandler;
}

export interface RunTurnOptions extends WaitOptions {
  /** Default true; false returns `running` as soon as the prompt is accepted. */
  wait?: boolean;
  /** The session was just created: it has no earlier messages to tell apart from this turn's. */
  fresh?: boolean;
}

/** Subscribes, runs `send` (which prompts the session), and waits for the turn it starts. */
export async function runTurn(
  ctx: CoreContext,
  sessionId: string,
  send: (watch: TurnWatch) => Promise<void>,
  options: RunTurnOptions = {},
): Promise<TurnSummary> {
  const [after, watch] = await Promise.all([
    options.fresh ? undefined : ctx.engine.newestMessageId(sessionId),
    TurnWatch.start(ctx.engine, ctx.hub, sessionId, { onProgress: options.onProgress }),
  ]);
  return follow(ctx, watch, options, async (at) => {
    watch.prompted(after);
    await send(watch);
    return options.wait === false ? "timeout" : waitTurn(ctx, at, options);
  });
}

/** Waits for whatever the session is doing now (or returns its last turn if it is idle). */
export async function waitForSession(ctx: CoreContext, sessionId: string, options: WaitOptions = {}): Promise<TurnSummary> {
  const running = runningWatch(ctx, sessionId) ?? switchingAttempt(ctx, sessionId);
  if (running) {
    running.onProgress = options.onProgress;
    try {
      // Kept already: follow() only keeps or closes a newer attempt's watch (model fallback).
      return await follow(ctx, running, options, (at) => waitTurn(ctx, at, options));
    } finally {
      running.onProgress = undefined;
    }
  }
  const watch = await TurnWatch.start(ctx.engine, ctx.hub, sessionId, { onProgress: options.onProgress });
  return follow(ctx, watch, options, (at) => waitTurn(ctx, at, options));
}

/**
 * Runs the wait, then keeps the watch if the turn goes on, or closes it. `at.watch` may move on to
 * a later attempt's watch when the fallback watchdog switches models (turns/fallback-wait.ts).
 */
async function follow(
  ctx: CoreContext,
  watch: TurnWatch,
  options: RunTurnOptions,
  waitFor: (at: { watch: TurnWatch }) => Promise<WaitOutcome>,
): Promise<TurnSummary> {
  const at = { watch };
  let keepIt = false;
  try {
    const outcome = await waitFor(at);
    keepIt = outcome !== "idle";
    if (options.wait === false) return { sessionId: watch.sessionId, status: "running", answer: "" };
    return await summarizeSession(ctx, watch.sessionId, { outcome, watch: at.watch, detail: options.detail });
  } finally {
    if (keepIt) keep(ctx, at.watch);
    else at.watch.close();
  }
}

export interface SummarizeOptions {
  outcome: WaitOutcome;
  watch?: TurnWatch;
  detail?: Detail;
}

/** The summary of the session's last turn, given how the wait for it ended. */
export async function summarizeSession(ctx: CoreContext, sessionId: string, o: SummarizeOptions): Promise<TurnSummary> {
  const over = o.outcome === "idle";
  const verdict = over ? o.watch?.verdict : undefined;
  // The watch knew the messages when it confirmed the end (a lost server cannot be read): reuse them.
  const messages = verdict && o.watch?.messages ? o.watch.messages : await ctx.engine.lastTurn(sessionId);
  if (over && !verdict && !recordedVerdict(messages)) {
    // Idle, but the last reply's end is not recorded yet (a failed turn's error lands a moment
    // after its first idle; a turn cut off by a restart never gets one): the machine decides.
    return waitForSession(ctx, sessionId, { detail: o.detail });
  }
  const pending = over
    ? []
    : o.watch && o.watch.pending.size > 0
      ? [...o.watch.pending.values()]
      : await ctx.engine.listPending(o.watch?.sessions ?? [sessionId]);
  const input = { sessionId, messages, outcome: o.outcome, pending, filesEdited: o.watch?.filesEdited, verdict, detail: o.detail };
  const summary = withFallbacks(ctx, summarizeTurn(input), messages);
  if (!over || summary.status === "lost" || !summary.messageId || o.detail === "final" || !summary.files?.length) return summary;
  if (!(await ctx.engine.capabilities()).turnDiffLines) return summary; // nothing the messages lack
  // Per-turn diffs exist only in git projects (docs/opencode-behaviour.md §7); they also name what a shell command changed.
  const diff: FileDiff[] = await ctx.engine.turnDiff(sessionId, summary.messageId).catch(() => []);
  return diff.length > 0 ? withFallbacks(ctx, summarizeTurn({ ...input, diff }), messages) : summary;
}
