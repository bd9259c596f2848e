// A message to a session that exists, under the ledger (conductor.send with a request id, and
// conductor.delegations.send): the start claims its record first, so a repeated request id sends
// nothing again (it waits for the first send's turn instead), and the record is what an MCP task of
// oc_send reads. The session goes on record once opencode has taken the message (a delegation's
// before its prompt: there the session is new); where it lives (this server, a private instance, a
// fleet server) is holderOf's to say.
import { result as sessionResult, send, wait as sessionWait, type SendOptions } from "../control.js";
import { quoted, UsageError } from "../errors.js";
import { validPromptText } from "../inputs/prompt-text.js";
import { startOnce, type Started } from "../ledger/start-once.js";
import type { TurnSummary } from "../turns/summary.js";
import type { PlacementHost } from "./host.js";
import { holderOf, taskEnd } from "./run.js";

export interface SendStartOptions extends SendOptions {
  /** The idempotency key: a repeat (even from another process on the same state dir) sends nothing. */
  requestId?: string;
  /** Who sends it (the error for a request id reused by another kind of call). Default `send`. */
  origin?: string;
}

export type SentTurn = TurnSummary & { delivery: NonNullable<SendOptions["delivery"]> };

export function startSend(host: PlacementHost, sessionId: string, message: string, o: SendStartOptions = {}): Started<SentTurn> {
  if (o.requestId !== undefined && (typeof o.requestId !== "string" || o.requestId.length === 0))
    throw new UsageError(`\`requestId\` must be a non-empty string (got ${quoted(String(o.requestId).slice(0, 80))}).`);
  validPromptText(message, "message"); // before the ledger claims anything
  const { requestId, origin, ...options } = o;
  const delivery = options.delivery ?? "queue";
  const record = { kind: "send" as const, requestId, origin: origin ?? "send", placement: "here" as const, server: host.engine.url, size: 1, delivery };
  return startOnce<SentTurn>(host.ledger, record, {
    async run(hooks) {
      const holder = await holderOf(host, hooks.record, sessionId);
      // The turn a reader must not take for this message's (undefined when opencode does not answer).
      // A steer on opencode 2.x joins the running turn: that one is the message's.
      const joins = delivery === "steer" && (await holder.engine.capabilities()).nativeSteer;
      const priorTurn = joins ? undefined : (await sessionResult(holder, sessionId)).last.messageId;
      const signal = options.signal ? AbortSignal.any([options.signal, hooks.signal]) : hooks.signal;
      // On record once opencode has the message: a repeat then waits for its turn, and a reader
      // after a restart follows a message that is there (never one that was not sent).
      // With the id opencode gave it (2.x), a cancel can tell it queued from running (send-cancel.ts).
      const onSent = (inputId: string | undefined) =>
        hooks.onSession(sessionId, 0, { ...(priorTurn ? { priorTurn } : {}), ...(inputId ? { sentInput: inputId } : {}) });
      return send(holder, sessionId, message, { ...options, delivery, signal, onSent });
    },
    // A repeat waits for (or reads) the session's turn as oc_wait would; it sends nothing.
    async replay(first) {
      const holder = await holderOf(host, first, sessionId);
      const wait = options.wait ?? delivery === "steer";
      const summary = wait ? await sessionWait(holder, sessionId, options) : (await sessionResult(holder, sessionId, { detail: options.detail })).last;
      return { ...summary, delivery: first.delivery ?? delivery };
    },
    endOf: taskEnd,
  });
}
