// How a turn ended, decided from the evidence opencode recorded (model/turn-outcome.ts: per message
// its id, role, parent, whether it completed, its finish reason and its error, plus the errors of its
// tool calls). The turn machine (machine.ts) and the summaries decide a turn's outcome from these
// and nothing else.
import type { MessageEvidence, RecordedError, TurnVerdict } from "../model/turn-outcome.js";

/** The user message that starts the turn: the first prompt after `after` (the newest id before the prompt). */
export function turnStart(messages: readonly MessageEvidence[], after: string | undefined): MessageEvidence | undefined {
  return messages.find((m) => m.role === "user" && !m.continues && (after === undefined || m.id > after));
}

/**
 * The user messages of the turn `user` starts: it, and those opencode wrote after it to carry the
 * turn on (an automatic compaction's marker and its "Continue"), up to the next prompt.
 */
export function turnUserIds(messages: ReadonlyArray<Pick<MessageEvidence, "id" | "role" | "continues">>, user: Pick<MessageEvidence, "id">): Set<string> {
  const ids = new Set([user.id]);
  for (const m of messages) {
    if (m.role !== "user" || m.id <= user.id) continue;
    if (!m.continues) break;
    ids.add(m.id);
  }
  return ids;
}

/** The replies of the turn `user` starts (a compaction's completed summary of the session is none; a failed one ends the turn). */
export function repliesTo(messages: readonly MessageEvidence[], user: MessageEvidence): MessageEvidence[] {
  const ids = turnUserIds(messages, user);
  return messages.filter((m) => m.role === "assistant" && !m.compaction && m.parentId !== undefined && ids.has(m.parentId));
}

/** The last reply is done with: it completed (with or without an error) or carries an error. */
export function isTerminal(message: MessageEvidence): boolean {
  return message.completed || message.error !== undefined;
}

/**
 * The outcome of a turn whose last reply is terminal, from what opencode recorded:
 * - an error on the reply: `error` (or `interrupted` for MessageAbortedError);
 * - no error but the session reported one while the turn ran (and the reply never finished a
 *   step): that error; an abort reported this way is `interrupted`;
 * - completed without ever finishing a step (an abort during a retry wait): `interrupted`, with
 *   no error (opencode records none);
 * - finished on `tool-calls` yet the loop stopped: a tool call ended the turn (a rejected
 *   permission, a dismissed question): `interrupted`, with the tool's error;
 * - else `done`.
 */
export function outcomeOf(last: MessageEvidence, sessionError: RecordedError | undefined): TurnVerdict {
  if (last.error) return isAbort(last.error) ? { status: "interrupted", error: last.error } : { status: "error", error: last.error };
  if (last.finish === undefined || last.finish === "unknown") {
    if (sessionError) return isAbort(sessionError) ? { status: "interrupted", error: sessionError } : { status: "error", error: sessionError };
    // opencode recorded no error here (docs/opencode-behaviour.md §6): say interrupted, name none.
    return { status: "interrupted" };
  }
  if (last.finish === "tool-calls") {
    const reason = last.toolErrors.at(-1);
    return { status: "interrupted", error: { name: "ToolStopped", message: reason ?? "The turn stopped after a tool call." } };
  }
  return { status: "done" };
}

export const ABORTED = "MessageAbortedError";
/** opencode 2.x's error type for a step it stopped (an interrupt, a rejected permission). */
export const ABORTED_V2 = "aborted";
/** opencode 2.x's error type for an automatic compaction it stopped (an interrupt while it ran: no step was running). */
export const COMPACTION_ABORTED_V2 = "compaction.interrupted";

function isAbort(error: RecordedError): boolean {
  return error.name === ABORTED || error.name === ABORTED_V2 || error.name === COMPACTION_ABORTED_V2;
}
