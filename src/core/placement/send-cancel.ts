// The cancel of a sent message (conductor.delegations.cancel of a `send` record, the MCP tasks/cancel
// of an oc_send task). A message opencode still holds behind another prompt's turn is not that
// turn: interrupting the session would stop someone else's work and, on 2.x, leave the message
// waiting to run later, while the record said cancelled. So: where the server can take it back
// (2.0.26's inbox), it is taken back and the re-read inbox must no longer list it; where it cannot
// (1.x, the 2.x pre-release), nothing is interrupted and the caller is told so. A message whose own
// turn has started is interrupted as any task is (delegations.ts).
import type { CoreContext } from "../context.js";
import type { WaitingPrompt } from "../engine/engine.js";
import { UsageError } from "../errors.js";
import { startedSessions, type LedgerRecord } from "../ledger/record.js";
import { sessionScope } from "../sessions/scope.js";
import type { PlacementHost } from "./host.js";
import { holderOf } from "./run.js";

/** Refused: the message waits in opencode's queue behind another turn and this server cannot take it back. */
export class QueuedMessageError extends UsageError {
  override name = "QueuedMessageError";
}

/**
 * `withdrawn`: taken off opencode's queue (re-read: gone), the record may say cancelled.
 * `started`: its own turn runs (or nothing runs): stop it as any task. Throws QueuedMessageError otherwise.
 */
export async function cancelSentMessage(host: PlacementHost, r: LedgerRecord): Promise<"withdrawn" | "started"> {
  const sessionId = startedSessions(r)[0];
  if (r.kind !== "send" || sessionId === undefined) return "started";
  // Scoped to the session's directory: 1.x reads a session's status per directory instance.
  const holder = await sessionScope(await holderOf(host, r, sessionId), sessionId);
  const waiting = await waitingOf(holder, sessionId, r);
  if (!waiting) return "started";
  if (waiting.withdrawable && waiting.inputId !== undefined) {
    await holder.engine.withdrawPrompt(sessionId, waiting.inputId);
    return "withdrawn";
  }
  const version = (await holder.engine.info()).version;
  throw new QueuedMessageError(
    `Not cancelled: the message is queued in opencode session ${sessionId} behind a turn that is not this message's, and opencode ${version} cannot withdraw a queued message. ` +
      `It will run after the current turn; nothing was interrupted. To stop everything, ${waiting.onInterrupt}.`,
  );
}

async function waitingOf(holder: CoreContext, sessionId: string, r: LedgerRecord): Promise<WaitingPrompt | undefined> {
  // A steer on 1.x stopped the running turn before it went in, and on 2.x it joins the running turn: that turn is the message's.
  if (r.delivery === "steer") return undefined;
  return holder.engine.waitingPrompt(sessionId, { ...(r.priorTurn ? { after: r.priorTurn } : {}), ...(r.sentInput ? { inputId: r.sentInput } : {}) });
}
