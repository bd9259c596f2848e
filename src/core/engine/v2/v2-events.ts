// The v2 engine's side of the turn machine: opencode 2.x events and messages as TurnEvents and
// RecordedMessages (docs/opencode-2x-behaviour.md has the observed shapes). 2.x states each
// execution's outcome outright, so the machine is built with `statedOutcomes` (machine.ts says
// why) and ends a live turn on that event; the step messages it emits give the machine its phase,
// and a snapshot (recordedMessagesV2 + activityV2) lets resync() decide after a gap in the stream.
// 2.x assistant messages carry no parent id: a step answers the user message promoted last before
// it, in the stream as in the server's message list (oldest first).
import type { MessageEvidence, RecordedError } from "../../model/turn-outcome.js";
import type { V2Event } from "../../../client/v2/event-framing.js";
import type { SessionActivity, TurnEvent, TurnMachineOptions } from "../../model/turn-event.js";
import { startsTurnV2 } from "./v2-subagent-notice.js";

/** How to build the machine for a 2.x session. */
export const V2_MACHINE_OPTIONS: TurnMachineOptions = { statedOutcomes: true };

/** A 2.x message as `GET /api/session/{id}/message` returns it (only what the machine reads). */
export interface V2MessageRecord {
  id: string;
  type: string;
  finish?: string;
  error?: unknown;
  time?: { created?: number; completed?: number };
  content?: Array<{ type: string; state?: { status?: string; error?: unknown } }>;
  /** A compaction's: `running`, `completed` or `failed`, and `auto` or `manual`. */
  status?: string;
  reason?: string;
  /** A synthetic message's (v2-subagent-notice.ts). */
  metadata?: unknown;
}

/**
 * An automatic compaction that failed. 2.x compacts by itself inside an execution, before a step
 * whose context would be nearly full (after the previous step's tokens), and then restarts the step;
 * a compaction that fails (the summary call fails, produces nothing, or is interrupted) ends the
 * execution with its error, and the compaction message holding that error is the last thing the
 * turn recorded. So it is read as the turn's last reply (a step that failed). A completed one is
 * no reply (the step after it is), and a manual one (`session.compact`) is an execution of its own.
 */
export function isFailedAutoCompaction(m: V2MessageRecord): boolean {
  return m.type === "compaction" && m.reason === "auto" && m.status === "failed";
}

const MAX_ERROR_MESSAGE = 500;

/** opencode 2.x's error object `{type, message, status?}` as a RecordedError (`type` as the name). */
export function recordedErrorV2(raw: unknown): RecordedError | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const { type, message, status } = raw as { type?: unknown; message?: unknown; status?: unknown };
  if (typeof type !== "string") return undefined;
  const text = typeof message === "string" ? message.trim() : "";
  return {
    name: type,
    message: text.length > MAX_ERROR_MESSAGE ? `${text.slice(0, MAX_ERROR_MESSAGE)}…` : text,
    ...(typeof status === "number" ? { statusCode: status } : {}),
  };
}

/** One 2.x message; `parentId`: the user message it answers (the last one before it in the list). */
export function recordedMessageV2(m: V2MessageRecord, parentId?: string): MessageEvidence {
  const toolErrors = (m.content ?? []).flatMap((part) => {
    const error = part.type === "tool" && part.state?.status === "error" ? recordedErrorV2(part.state.error) : undefined;
    return error ? [error.message] : [];
  });
  if (m.type !== "assistant" && !isFailedAutoCompaction(m)) return { id: m.id, role: "user", completed: false, toolErrors };
  const error = recordedErrorV2(m.error);
  return {
    id: m.id,
    role: "assistant",
    ...(parentId !== undefined ? { parentId } : {}),
    completed: m.time?.completed !== undefined,
    ...(m.finish ? { finish: m.finish } : {}),
    ...(error ? { error } : {}),
    toolErrors,
  };
}

/** A session's messages, oldest first, with each step's parent found by its place in the list. */
export function recordedMessagesV2(messages: readonly V2MessageRecord[]): MessageEvidence[] {
  let user: string | undefined;
  return messages.flatMap((m) => {
    if (startsTurnV2(m)) user = m.id;
    else if (m.type !== "assistant" && !isFailedAutoCompaction(m)) return []; // a completed compaction is no reply to anyone, other synthetic text no prompt
    return [recordedMessageV2(m, user)];
  });
}

/** `GET /api/session/active` (`{data: {<sessionID>: {type: "running"}}}`) as the session's activity. */
export function activityV2(active: unknown, sessionId: string): SessionActivity {
  const data = (active as { data?: Record<string, unknown> } | undefined)?.data;
  return data && typeof data === "object" && data[sessionId] !== undefined ? "busy" : "idle";
}

const OUTCOMES = {
  "session.execution.succeeded": "succeeded",
  "session.execution.failed": "failed",
  "session.execution.interrupted": "interrupted",
} as const;

/** Translates one session's 2.x events; keeps each step's message as later events complete it. */
export class V2TurnEvents {
  private readonly steps = new Map<string, MessageEvidence>();
  /** The user message promoted last: the one the next step answers. */
  private user: string | undefined;
  /** The error of the step that failed last: an interruption's outcome carries no error of its own. */
  private stepError: RecordedError | undefined;

  constructor(readonly sessionId: string) {}

  translate(event: V2Event): TurnEvent[] {
    if (event.data.sessionID !== this.sessionId) return [];
    const data = event.data;
    const stepId = typeof data.assistantMessageID === "string" ? data.assistantMessageID : undefined;
    switch (event.type) {
      case "session.execution.started":
        return [{ type: "status", status: "busy" }];
      case "session.input.promoted": {
        if (typeof data.inputID !== "string") return [];
        this.user = data.inputID;
        return [{ type: "message", message: { id: data.inputID, role: "user", completed: false, toolErrors: [] } }];
      }
      case "session.step.started":
        if (!stepId) return [];
        this.stepError = undefined;
        // A retry starts a new step into the same message: it is open again.
        return [{ type: "status", status: "busy" }, this.step(stepId, { completed: false, finish: undefined, error: undefined })];
      case "session.retry.scheduled":
        return [{ type: "status", status: "retry" }];
      case "session.step.ended":
        if (!stepId) return [];
        return [this.step(stepId, { completed: true, finish: typeof data.finish === "string" ? data.finish : undefined })];
      case "session.step.failed": {
        if (!stepId) return [];
        this.stepError = recordedErrorV2(data.error);
        return [this.step(stepId, { completed: true, finish: "error", error: this.stepError })];
      }
      case "session.compaction.failed":
        // An interruption during an automatic compaction stops no step: its error is the compaction's.
        this.stepError = recordedErrorV2(data.error);
        return [];
      case "session.tool.failed": {
        const error = recordedErrorV2(data.error);
        const step = stepId ? this.steps.get(stepId) : undefined;
        if (!step || !error) return [];
        return [this.step(step.id, { toolErrors: [...step.toolErrors, error.message] })];
      }
      case "session.execution.succeeded":
      case "session.execution.failed":
      case "session.execution.interrupted":
        return [
          { type: "outcome", outcome: OUTCOMES[event.type], ...this.outcomeError(event) },
          { type: "status", status: "idle" },
        ];
      // In the spec, not seen on the pre-release's stream: kept for servers that send them.
      case "session.idle":
        return [{ type: "status", status: "idle" }];
      case "session.status": {
        const status = (data.status as { type?: unknown } | undefined)?.type;
        return status === "idle" || status === "busy" || status === "retry" ? [{ type: "status", status }] : [];
      }
      default:
        return [];
    }
  }

  private outcomeError(event: V2Event): { error?: RecordedError } {
    if (event.type === "session.execution.failed") {
      const error = recordedErrorV2(event.data.error);
      return error ? { error } : {};
    }
    if (event.type !== "session.execution.interrupted") return {};
    const reason = typeof event.data.reason === "string" ? event.data.reason : undefined;
    const step = this.stepError ?? { name: "aborted", message: "Execution interrupted" };
    return { error: { ...step, ...(reason ? { reason } : {}) } };
  }

  private step(id: string, change: Partial<MessageEvidence>): TurnEvent {
    const before = this.steps.get(id) ?? { id, role: "assistant" as const, ...(this.user ? { parentId: this.user } : {}), completed: false, toolErrors: [] };
    const merged: MessageEvidence = { ...before, ...change };
    // Drop what the change cleared, so a reopened step reads like a fresh one.
    for (const key of ["finish", "error"] as const) if (merged[key] === undefined) delete merged[key];
    this.steps.set(id, merged);
    return { type: "message", message: merged };
  }
}
