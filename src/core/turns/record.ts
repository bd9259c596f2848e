// What opencode recorded about a turn, in a form that does not depend on the engine (v1 messages
// today, v2 messages later): each message's id, role, parent, whether it completed, its finish
// reason and its error, plus the errors of its tool calls. The turn machine (machine.ts) and the
// summaries decide a turn's outcome from these records and nothing else.

export interface RecordedError {
  /** opencode's error name: APIError, ProviderAuthError, UnknownError, MessageAbortedError, … */
  name: string;
  /** One line: opencode's message without the stack trace some errors carry. */
  message: string;
  /** The provider's HTTP status, for an APIError. */
  statusCode?: number;
  /** Why the engine stopped the turn, when it says (opencode 2.x: `user`, `shutdown`, `superseded`). */
  reason?: string;
}

export interface RecordedMessage {
  id: string;
  role: "user" | "assistant";
  /** The user message an assistant message answers. */
  parentId?: string;
  /** The assistant message has its completion time (a step, or the whole turn, finished). */
  completed: boolean;
  /** Why the model step stopped: `stop`, `length`, `tool-calls`, … (absent when it never finished). */
  finish?: string;
  error?: RecordedError;
  /** Errors of the tool calls in the message (a rejected permission, a dismissed question). */
  toolErrors: string[];
}

/** `done`: the agent finished; `lost`: opencode recorded no end and never will (it went away). */
export type TurnEndStatus = "done" | "error" | "interrupted" | "lost";

export interface TurnVerdict {
  status: TurnEndStatus;
  error?: RecordedError;
}

const MAX_ERROR_MESSAGE = 500;

/** opencode's error object (`{name, data: {message, statusCode, …}}`) as a RecordedError. */
export function recordedError(raw: unknown): RecordedError | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const { name, data } = raw as { name?: unknown; data?: { message?: unknown; statusCode?: unknown } };
  if (typeof name !== "string") return undefined;
  const message = typeof data?.message === "string" ? data.message : JSON.stringify(data ?? {});
  const statusCode = typeof data?.statusCode === "number" ? data.statusCode : undefined;
  return { name, message: oneLine(message), ...(statusCode !== undefined ? { statusCode } : {}) };
}

/** Drops a stack trace (opencode sends one inside some UnknownError messages) and bounds the length. */
function oneLine(message: string): string {
  const lines = message.split("\n");
  const cut = lines.findIndex((line) => /^\s+at\s/.test(line));
  const kept = (cut < 0 ? lines : lines.slice(0, cut)).join("\n").trim();
  return kept.length > MAX_ERROR_MESSAGE ? `${kept.slice(0, MAX_ERROR_MESSAGE)}…` : kept;
}

/** The user message that starts the turn: the first one after `after` (the newest id before the prompt). */
export function turnStart(messages: readonly RecordedMessage[], after: string | undefined): RecordedMessage | undefined {
  return messages.find((m) => m.role === "user" && (after === undefined || m.id > after));
}

export function repliesTo(messages: readonly RecordedMessage[], user: RecordedMessage): RecordedMessage[] {
  return messages.filter((m) => m.role === "assistant" && m.parentId === user.id);
}

/** The last reply is done with: it completed (with or without an error) or carries an error. */
export function isTerminal(message: RecordedMessage): boolean {
  return message.completed || message.error !== undefined;
}

/**
 * The outcome of a turn whose last reply is terminal, from what opencode recorded:
 * - an error on the reply: `error` (or `interrupted` for MessageAbortedError);
 * - no error but the session reported one while the turn ran (and the reply never finished a
 *   step): that error; an abort reported this way is `interrupted`;
 * - completed without ever finishing a step (an abort during a retry wait): `interrupted`;
 * - finished on `tool-calls` yet the loop stopped: a tool call ended the turn (a rejected
 *   permission, a dismissed question): `interrupted`, with the tool's error;
 * - else `done`.
 */
export function outcomeOf(last: RecordedMessage, sessionError: RecordedError | undefined): TurnVerdict {
  if (last.error) return isAbort(last.error) ? { status: "interrupted", error: last.error } : { status: "error", error: last.error };
  if (last.finish === undefined || last.finish === "unknown") {
    if (sessionError) return isAbort(sessionError) ? { status: "interrupted", error: sessionError } : { status: "error", error: sessionError };
    return { status: "interrupted", error: { name: ABORTED, message: "The turn was stopped before the model finished a step." } };
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

function isAbort(error: RecordedError): boolean {
  return error.name === ABORTED || error.name === ABORTED_V2;
}
