// A recorded message read as evidence of how its turn went (model/turn-outcome.ts): what the turn
// machine and the summaries decide a turn's outcome from. Each engine reads its server's messages
// and errors through these, so they sit in the core's vocabulary, not in turns/.
import type { Message, MessageInfo, Part } from "./message.js";
import type { MessageEvidence, RecordedError } from "./turn-outcome.js";

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

/** A message (info + parts) as the turn machine sees it. */
export function evidenceOf(m: Message): MessageEvidence {
  return evidenceOfInfo(m.info, toolErrorsOf(m.parts), m.parts.some(continuesTurn));
}

/**
 * A part of a user message that opencode 1.x wrote to carry on the turn before it after an automatic
 * compaction (docs/opencode-behaviour.md §2): the compaction marker (`auto`) and the synthetic
 * "Continue if you have next steps" (`metadata.compaction_continue`). A compaction asked for by
 * hand (`auto: false`) is a turn of its own.
 */
export function continuesTurn(part: Part): boolean {
  if (part.type === "compaction") return part.auto === true;
  return part.type === "text" && part.synthetic === true && part.metadata?.compaction_continue === true;
}

/**
 * An assistant message that is a compaction's summary of the session and no reply: one that
 * completed without an error. opencode 1.x writes the summary as an assistant message
 * (`summary: true`); when its call fails (an HTTP error, an abort), that message holds the error,
 * nothing follows it ("Continue" is written only after a summary that completed), and the session
 * reports the same error and goes idle: the turn ended there, so a failed summary is the turn's last
 * reply. A running one counts as a reply too, so the turn waits for how it ends (its error lands
 * after `session.idle`) instead of ending at the tool step before it (docs/opencode-behaviour.md §0.3).
 */
export function isCompactionSummary(info: MessageInfo): boolean {
  return info.role === "assistant" && info.summary === true && info.time.completed !== undefined && info.error === undefined;
}

/**
 * A message's info as the turn machine sees it, with the tool errors of its parts and whether a part
 * carries on the turn before it (kept apart when parts arrive as events).
 */
export function evidenceOfInfo(info: MessageInfo, toolErrors: string[], continues = false): MessageEvidence {
  if (info.role === "user") return { id: info.id, role: "user", completed: false, toolErrors, ...(continues ? { continues } : {}) };
  const error = recordedError(info.error);
  return {
    id: info.id,
    role: "assistant",
    parentId: info.parentID,
    completed: info.time.completed !== undefined,
    ...(info.finish ? { finish: info.finish } : {}),
    ...(error ? { error } : {}),
    ...(isCompactionSummary(info) ? { compaction: true } : {}),
    toolErrors,
  };
}

function toolErrorsOf(parts: Part[]): string[] {
  return parts.flatMap((p) => (p.type === "tool" && p.state.status === "error" ? [p.state.error] : []));
}
