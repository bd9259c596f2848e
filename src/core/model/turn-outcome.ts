// How a turn ended, as opencode recorded it. The turn machine (turns/machine.ts) and the summaries
// decide it from evidence: per message its id, role, parent, whether it completed, its finish
// reason and its error, plus the errors of its tool calls. Each engine reads that evidence from its
// own messages and events (engine/v1/, engine/v2/).

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

/** What the turn machine knows of one message: enough to tell whether, and how, its turn ended. */
export interface MessageEvidence {
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
  /**
   * A user message opencode wrote itself to carry on the turn before it (1.x, after an automatic
   * compaction: the compaction marker, then "Continue if you have next steps"): not a new prompt.
   */
  continues?: boolean;
  /**
   * An assistant message that is a compaction's summary of the session, not a reply to the prompt:
   * one that completed without an error (a running or failed summary is a reply, evidence.ts isCompactionSummary).
   */
  compaction?: boolean;
}

/**
 * `done`: the agent finished; `lost`: opencode recorded no end and never will (its process died under
 * the turn, or it answers and holds no end). A server that does not answer is no verdict: the
 * outcome is unknown then (`unreachable`, turns/summary.ts).
 */
export type TurnEndStatus = "done" | "error" | "interrupted" | "lost";

export interface TurnVerdict {
  status: TurnEndStatus;
  error?: RecordedError;
}

/**
 * A turn summary's status. `done`, `error`, `interrupted` and `lost` say what opencode recorded;
 * `unreachable`: opencode does not answer, so nobody knows yet (the outcome may still come: ask
 * again); `checks_failed` and `budget_exceeded` come from the gate loop and budgets (delegate).
 */
export type TurnStatus = "done" | "error" | "blocked" | "running" | "interrupted" | "lost" | "unreachable" | "checks_failed" | "budget_exceeded";
