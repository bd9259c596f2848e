// Turns as the core uses them: send something and wait for the turn it starts, attach to a running
// turn, and summarise the session's last turn. Waiting is event-driven (see turns/watch.ts).
// A turn still running when its caller stops waiting (timeout, `wait: false`, blocked, the server
// not answering) keeps its watch, so a later wait() picks up where it was (the files it saw, the
// requests that block it). A timeout is kept whatever the server does (turns/deadline.ts): a read
// that has not answered when the answer is owed makes the answer `unreachable`, with the session id
// and what the events told.
import type { BlockedHandler } from "./blocked.js";
import type { CoreContext } from "../context.js";
import { connectionRefused, safeUrl } from "../../client/errors.js";
import { Deadline, isNoAnswer, unreachableMessage } from "./deadline.js";
import { switchingAttempt, waitTurn, withFallbacks } from "./fallback-wait.js";
import { recordedVerdict, summarizeTurn, type Detail, type FileDiff, type TurnSummary } from "./summary.js";
import { keep, runningWatch } from "./kept-watches.js";
import { TurnWatch } from "./watch.js";
import { blockingRequests } from "./blocking-requests.js";
import type { WaitOutcome } from "./watch-wait.js";
import type { TurnProgress } from "./turn-progress.js";

export interface WaitOptions {
  /**
   * Stop waiting after this long and answer `running`; the turn goes on. The answer comes within
   * this plus ANSWER_MARGIN_MS whatever the server does (`unreachable` when it does not answer).
   * Default: no limit.
   */
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
  const deadline = Deadline.after(options.timeoutMs);
  const started = TurnWatch.start(ctx.engine, ctx.hub, sessionId, { onProgress: options.onProgress });
  let after: string | undefined;
  let watch: TurnWatch;
  try {
    [after, watch] = await Promise.all([
      options.fresh ? undefined : deadline.read(ctx.engine.newestMessageId(sessionId), "session.messages"),
      deadline.read(started, "the event stream", (late) => late.close()),
    ]);
  } catch (error) {
    void started.then(
      (w) => w.close(),
      () => undefined,
    );
    if (!isNoAnswer(error)) throw error;
    throw new Error(
      `opencode at ${safeUrl(ctx.engine.url)} did not answer before the task was sent (${error.message}): nothing was sent to session ${sessionId}. Send the task again once opencode answers.`,
      { cause: error },
    );
  }
  return follow(ctx, watch, options, deadline, async (at) => {
    watch.prompted(after);
    // The prompt may have reached opencode even when its answer does not come in time: then the
    // outcome is unknown. A refused connection carried nothing: that is an error, not an unknown.
    await deadline.read(send(watch), "the prompt").catch((error: unknown) => {
      if (!connectionRefused(error)) throw error;
      throw new Error(
        `opencode at ${safeUrl(ctx.engine.url)} refused the connection: the task was not sent to session ${sessionId}. Send it again once opencode runs.`,
        {
          cause: error,
        },
      );
    });
    return options.wait === false ? "timeout" : waitTurn(ctx, at, { ...options, timeoutMs: deadline.waitMs });
  });
}

/**
 * Waits for whatever the session is doing now (or returns its last turn if it is idle). `deadline`:
 * when the answer is owed, if the caller already counts from an earlier moment (else `timeoutMs` from now).
 */
export async function waitForSession(
  ctx: CoreContext,
  sessionId: string,
  options: WaitOptions = {},
  deadline = Deadline.after(options.timeoutMs),
): Promise<TurnSummary> {
  const running = runningWatch(ctx, sessionId) ?? switchingAttempt(ctx, sessionId);
  if (running) {
    running.onProgress = options.onProgress;
    try {
      // Kept already: follow() only keeps or closes a newer attempt's watch (model fallback).
      return await follow(ctx, running, options, deadline, (at) => waitTurn(ctx, at, { ...options, timeoutMs: deadline.waitMs }));
    } finally {
      running.onProgress = undefined;
    }
  }
  const started = TurnWatch.start(ctx.engine, ctx.hub, sessionId, { onProgress: options.onProgress });
  let watch: TurnWatch;
  try {
    watch = await deadline.read(started, "the event stream", (late) => late.close());
  } catch (error) {
    if (!isNoAnswer(error)) throw error;
    return unreachableSummary(ctx, sessionId, undefined, unreachableMessage(ctx.engine.url, error), options.detail);
  }
  return follow(ctx, watch, options, deadline, (at) => waitTurn(ctx, at, { ...options, timeoutMs: deadline.waitMs }));
}

/**
 * Runs the wait, then keeps the watch if the turn goes on, or closes it. `at.watch` may move on to
 * a later attempt's watch when the fallback watchdog switches models (turns/fallback-wait.ts).
 * Whatever fails to answer in time (the prompt, the wait's reads, the summary's) makes the answer
 * `unreachable`: the turn may go on, so its watch is kept.
 */
async function follow(
  ctx: CoreContext,
  watch: TurnWatch,
  options: RunTurnOptions,
  deadline: Deadline,
  waitFor: (at: { watch: TurnWatch }) => Promise<WaitOutcome>,
): Promise<TurnSummary> {
  const at = { watch };
  let keepIt = true;
  try {
    const outcome = await waitFor(at);
    keepIt = outcome !== "idle";
    if (options.wait === false && outcome !== "unreachable") return { sessionId: watch.sessionId, status: "running", answer: "" };
    return await summarizeSession(ctx, watch.sessionId, { outcome, watch: at.watch, detail: options.detail, deadline });
  } catch (error) {
    if (!isNoAnswer(error)) {
      keepIt = false;
      throw error;
    }
    return unreachableSummary(ctx, watch.sessionId, at.watch, unreachableMessage(ctx.engine.url, error), options.detail);
  } finally {
    if (keepIt) keep(ctx, at.watch);
    else at.watch.close();
  }
}

export interface SummarizeOptions {
  outcome: WaitOutcome;
  watch?: TurnWatch;
  detail?: Detail;
  /** When the answer is owed: the summary's reads are bounded by it (default: the client's timeouts). */
  deadline?: Deadline;
}

/** The summary of the session's last turn, given how the wait for it ended. */
export async function summarizeSession(ctx: CoreContext, sessionId: string, o: SummarizeOptions): Promise<TurnSummary> {
  if (o.outcome === "unreachable") {
    const why = o.watch?.unreachable?.message ?? `opencode at ${safeUrl(ctx.engine.url)} does not answer: the turn's outcome is unknown and may still come.`;
    return unreachableSummary(ctx, sessionId, o.watch, why, o.detail);
  }
  try {
    return await readSummary(ctx, sessionId, o, o.deadline ?? Deadline.after(undefined));
  } catch (error) {
    // The server did not answer the reads: what the events told is all there is, and the session id.
    if (!isNoAnswer(error)) throw error;
    return unreachableSummary(ctx, sessionId, o.watch, unreachableMessage(ctx.engine.url, error), o.detail);
  }
}

async function readSummary(ctx: CoreContext, sessionId: string, o: SummarizeOptions, deadline: Deadline): Promise<TurnSummary> {
  const over = o.outcome === "idle";
  const verdict = over ? o.watch?.verdict : undefined;
  // The turn the verdict judges: the session may have moved on to a message queued behind it.
  const turn = verdict ? o.watch?.turnMessageId : undefined;
  // The watch knew the messages when it confirmed the end (a dead server cannot be read): reuse them.
  let messages = verdict && o.watch?.messages ? o.watch.messages : await deadline.read(ctx.engine.lastTurn(sessionId), "session.messages");
  // The last turn's page may start after the judged turn: then the whole session holds it (a lost
  // turn's server may be gone: what the watch knew is all there is).
  if (turn !== undefined && verdict?.status !== "lost" && !messages.some((m) => m.info.id === turn))
    messages = await deadline.read(ctx.engine.messages(sessionId), "session.messages");
  if (over && !verdict && !recordedVerdict(messages)) {
    // Idle, but the last reply's end is not recorded yet (a failed turn's error lands a moment
    // after its first idle; a turn cut off by a restart never gets one): the machine decides.
    return waitForSession(ctx, sessionId, { detail: o.detail }, deadline);
  }
  const pending = over
    ? []
    : o.watch && o.watch.pending.size > 0
      ? [...o.watch.pending.values()]
      : // A sub-agent's request blocks its parent's turn: it counts too (blocking-requests.ts).
        (await deadline.read(blockingRequests(ctx.engine, o.watch?.sessions ?? [sessionId]), "the pending requests")).requests;
  const input = { sessionId, messages, outcome: o.outcome, pending, filesEdited: o.watch?.filesEdited, verdict, turn, detail: o.detail };
  const summary = withFallbacks(ctx, summarizeTurn(input), messages);
  if (!over || summary.status === "lost" || !summary.messageId || o.detail === "final" || !summary.files?.length) return summary;
  if (!(await ctx.engine.capabilities()).turnDiffLines) return summary; // nothing the messages lack
  // Per-turn diffs exist only in git projects (docs/opencode-behaviour.md §7); they also name what a shell command changed.
  const diff: FileDiff[] = await deadline.read(ctx.engine.turnDiff(sessionId, summary.messageId), "session.diff").catch(() => []);
  return diff.length > 0 ? withFallbacks(ctx, summarizeTurn({ ...input, diff }), messages) : summary;
}

/**
 * The answer when opencode does not answer: status `unreachable`, the session id, and what the
 * events told of the turn so far (nothing read: the server cannot be). The outcome may still come.
 */
export function unreachableSummary(ctx: CoreContext, sessionId: string, watch: TurnWatch | undefined, message: string, detail?: Detail): TurnSummary {
  const messages = watch?.knownMessages() ?? [];
  const summary = summarizeTurn({
    sessionId,
    messages,
    outcome: "unreachable",
    unreachable: { name: "ServerUnreachable", message },
    filesEdited: watch?.filesEdited,
    detail,
  });
  return withFallbacks(ctx, summary, messages);
}
