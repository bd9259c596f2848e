// Turns as the core uses them: send something and wait for the turn it starts, attach to a running
// turn, and summarise the session's last turn. Waiting is event-driven (see turn-watch.ts).
import { listPending } from "./approvals.js";
import type { CoreContext } from "./context.js";
import { summarizeTurn, type Detail, type TurnSummary } from "./summary.js";
import { TurnWatch, type TurnProgress, type WaitOutcome } from "./turn-watch.js";

export interface WaitOptions {
  /** Stop waiting after this long and answer `running`; the turn goes on. Default: no limit. */
  timeoutMs?: number;
  signal?: AbortSignal;
  detail?: Detail;
  onProgress?: (progress: TurnProgress) => void;
  /** Answer `blocked` as soon as a permission or question waits (default true). */
  returnOnBlocked?: boolean;
}

export interface RunTurnOptions extends WaitOptions {
  /** Default true; false returns `running` as soon as the prompt is accepted. */
  wait?: boolean;
  directory?: string;
}

/** Subscribes, runs `send` (which prompts the session), and waits for the turn it starts. */
export async function runTurn(ctx: CoreContext, sessionId: string, send: (watch: TurnWatch) => Promise<void>, options: RunTurnOptions = {}): Promise<TurnSummary> {
  const watch = await TurnWatch.start(ctx.client, ctx.hub, sessionId, { onProgress: options.onProgress });
  try {
    watch.prompted();
    await send(watch);
    if (options.wait === false) return { sessionId, status: "running", answer: "" };
    const outcome = await watch.wait(options);
    return await summarizeSession(ctx, sessionId, { outcome, watch, detail: options.detail, directory: options.directory });
  } finally {
    watch.close();
  }
}

/** Waits for whatever the session is doing now (or returns its last turn if it is idle). */
export async function waitForSession(ctx: CoreContext, sessionId: string, options: WaitOptions & { directory?: string } = {}): Promise<TurnSummary> {
  const watch = await TurnWatch.start(ctx.client, ctx.hub, sessionId, { onProgress: options.onProgress });
  try {
    const outcome = await watch.wait(options);
    return await summarizeSession(ctx, sessionId, { outcome, watch, detail: options.detail, directory: options.directory });
  } finally {
    watch.close();
  }
}

export interface SummarizeOptions {
  outcome: WaitOutcome;
  watch?: TurnWatch;
  detail?: Detail;
  interrupted?: boolean;
  directory?: string;
}

/** The summary of the session's last turn, given how the wait for it ended. */
export async function summarizeSession(ctx: CoreContext, sessionId: string, o: SummarizeOptions): Promise<TurnSummary> {
  const call = { directory: o.directory };
  const messages = await ctx.client.call("session.messages", { path: { sessionID: sessionId } }, call);
  const pending =
    o.outcome === "idle" ? [] : o.watch && o.watch.pending.size > 0 ? [...o.watch.pending.values()] : await listPending(ctx.client, o.watch?.sessions ?? [sessionId]);
  const summary = summarizeTurn({
    sessionId,
    messages,
    outcome: o.outcome,
    pending,
    filesEdited: o.watch?.filesEdited,
    sessionError: o.watch?.sessionError,
    interrupted: o.interrupted,
    detail: o.detail,
  });
  // Per-turn diffs exist only in git projects (notes §7); elsewhere the edited files stand.
  if (o.outcome === "idle" && summary.messageId && o.detail !== "final") {
    const diff = await ctx.client
      .call("session.diff", { path: { sessionID: sessionId }, query: { messageID: summary.messageId } }, call)
      .catch(() => []);
    if (diff.length > 0) summary.files = diff.flatMap((d) => (d.file ? [{ path: d.file, status: d.status, additions: d.additions, deletions: d.deletions }] : []));
  }
  return summary;
}
