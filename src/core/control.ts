// Working with a session that already runs: send it more, interrupt it, wait for it, read its state.
import type { CoreContext } from "./context.js";
import { resolveModelRef } from "./discovery.js";
import { UsageError } from "./errors.js";
import { sessionScope } from "./scope.js";
import type { TurnSummary } from "./summary.js";
import { runTurn, summarizeSession, waitForSession, type WaitOptions } from "./turn.js";
import { TurnWatch } from "./turn-watch.js";

export type Delivery = "queue" | "steer";

export interface SendOptions extends WaitOptions {
  /**
   * `queue` (default): the message runs after the current turn (opencode queues prompts on a busy
   * session). `steer`: the current turn is interrupted and the session continues with this message
   * (history kept). opencode's v1 engine cannot inject a message into a running turn.
   */
  delivery?: Delivery;
  /** Wait for the turn this message starts. Default: true for `steer`, false for `queue`. */
  wait?: boolean;
  model?: string;
  agent?: string;
}

export async function send(base: CoreContext, sessionId: string, message: string, o: SendOptions = {}): Promise<TurnSummary & { delivery: Delivery }> {
  const ctx = await sessionScope(base, sessionId);
  if (!message.trim()) throw new UsageError("`message` is empty: say what the agent should do next.");
  const delivery = o.delivery ?? "queue";
  if (delivery !== "queue" && delivery !== "steer") throw new UsageError(`Unknown delivery "${String(delivery)}": use queue or steer.`);
  const remembered = ctx.sessionDefaults?.get(sessionId);
  const modelInput = o.model ?? remembered?.model;
  const agent = o.agent ?? remembered?.agent;
  const model = modelInput ? await resolveModelRef(ctx, modelInput) : undefined;
  if (delivery === "steer") await stopTurn(ctx, sessionId);
  const body = {
    parts: [{ type: "text" as const, text: message }],
    ...(model ? { model: { providerID: model.providerID, modelID: model.modelID }, ...(model.variant ? { variant: model.variant } : {}) } : {}),
    ...(agent ? { agent } : {}),
  };
  const summary = await runTurn(ctx, sessionId, () => ctx.client.call("session.prompt_async", { path: { sessionID: sessionId }, body }), {
    ...o,
    wait: o.wait ?? delivery === "steer",
  });
  return { ...summary, delivery };
}

/** Aborts the session's current turn and waits until it has stopped. */
export async function interrupt(base: CoreContext, sessionId: string, o: Pick<WaitOptions, "detail"> = {}): Promise<TurnSummary & { wasRunning: boolean }> {
  const ctx = await sessionScope(base, sessionId);
  const wasRunning = await stopTurn(ctx, sessionId);
  const summary = await summarizeSession(ctx, sessionId, { outcome: "idle", detail: o.detail, interrupted: wasRunning });
  return { ...summary, wasRunning };
}

/** Waits for the session's current turn (or returns the last one when idle). */
export async function wait(base: CoreContext, sessionId: string, o: WaitOptions = {}): Promise<TurnSummary> {
  return waitForSession(await sessionScope(base, sessionId), sessionId, o);
}

export interface SessionState {
  sessionId: string;
  /** What the session does right now. */
  state: "idle" | "busy" | "retry";
  retry?: { attempt: number; message: string; nextAt: number };
  /** The last turn (status `running` or `blocked` while it goes on). */
  last: TurnSummary;
}

/** The session's state without waiting. */
export async function result(base: CoreContext, sessionId: string, o: Pick<WaitOptions, "detail"> = {}): Promise<SessionState> {
  const ctx = await sessionScope(base, sessionId);
  const status = (await ctx.client.call("session.status"))[sessionId];
  const state = !status || status.type === "idle" ? "idle" : status.type;
  const last = await summarizeSession(ctx, sessionId, { outcome: state === "idle" ? "idle" : "timeout", detail: o.detail });
  if (last.pending && last.pending.length > 0) last.status = "blocked";
  return {
    sessionId,
    state,
    ...(status?.type === "retry" ? { retry: { attempt: status.attempt, message: status.message, nextAt: status.next } } : {}),
    last,
  };
}

/** Aborts a running turn and resolves once the session is idle; false if nothing was running. */
async function stopTurn(ctx: CoreContext, sessionId: string): Promise<boolean> {
  const watch = await TurnWatch.start(ctx.client, ctx.hub, sessionId);
  try {
    const status = (await ctx.client.call("session.status"))[sessionId];
    if (!status || status.type === "idle") return false;
    await ctx.client.call("session.abort", { path: { sessionID: sessionId } });
    const outcome = await watch.wait({ timeoutMs: 30_000, returnOnBlocked: false });
    if (outcome !== "idle") throw new Error(`Session ${sessionId} did not stop within 30 s of the abort; check it with oc_result.`);
    return true;
  } finally {
    watch.close();
  }
}
