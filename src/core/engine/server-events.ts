// What one event says about any session of the server, whichever major sent it: whether a session
// started working, waits to retry, went idle or ended a run, and which permission request or
// question was asked or answered. Stateless and server-wide: the per-session turn translators
// (v1-signals.ts, v2-signals.ts) keep what concerns their session, and the console reads every
// session from it. Event shapes: docs/opencode-behaviour.md (1.x), docs/opencode-2x-behaviour.md (2.x).
import type { PendingRequest } from "../model/pending-request.js";
import { sessionOf } from "../../client/v2/event-framing.js";
import { permissionFrom, questionFrom } from "./v1/v1-requests.js";
import { recordedErrorV2 } from "./v2/v2-events.js";
import type { WatchSignal } from "./engine.js";
import type { HubEvent } from "./hub-events.js";
import { permissionFromV2, questionFromForm } from "./v2/v2-requests.js";

export type SessionActivityChange =
  /** `step`: 2.x began a model step (after a retry: the wait is over). */
  | { sessionId: string; state: "busy"; step?: true }
  | { sessionId: string; state: "retry"; attempt: number; message: string; next: number }
  /** 1.x: the server says the session is idle now. */
  | { sessionId: string; state: "idle" }
  /** 2.x: a run ended with a stated outcome (`session.execution.*`); what it recorded is in the session. */
  | { sessionId: string; state: "ended"; outcome: "succeeded" | "failed" | "interrupted" };

export type RequestChange = { kind: "asked"; request: PendingRequest } | { kind: "answered"; id: string };

const OUTCOMES = {
  "session.execution.succeeded": "succeeded",
  "session.execution.failed": "failed",
  "session.execution.interrupted": "interrupted",
} as const;

export function activityOf(event: HubEvent): SessionActivityChange | undefined {
  if (event.type === "session.status") {
    const { sessionID, status } = event.properties;
    if (status.type === "retry") return { sessionId: sessionID, state: "retry", attempt: status.attempt, message: status.message, next: status.next };
    return { sessionId: sessionID, state: status.type };
  }
  if (event.type !== "v2.event") return undefined;
  const v2 = event.properties;
  const sessionId = sessionOf(v2);
  if (!sessionId) return undefined;
  if (v2.type === "session.execution.started") return { sessionId, state: "busy" };
  if (v2.type === "session.step.started") return { sessionId, state: "busy", step: true };
  if (v2.type === "session.retry.scheduled") {
    const error = recordedErrorV2(v2.data.error);
    return {
      sessionId,
      state: "retry",
      attempt: typeof v2.data.attempt === "number" ? v2.data.attempt : 1,
      message: error ? error.message : "retrying",
      next: typeof v2.data.at === "number" ? v2.data.at : Date.now(),
    };
  }
  const outcome = OUTCOMES[v2.type as keyof typeof OUTCOMES];
  return outcome ? { sessionId, state: "ended", outcome } : undefined;
}

export function requestChangeOf(event: HubEvent): RequestChange | undefined {
  switch (event.type) {
    case "permission.asked":
      return { kind: "asked", request: permissionFrom(event.properties) };
    case "question.asked":
      return { kind: "asked", request: questionFrom(event.properties) };
    case "permission.replied":
    case "question.replied":
    case "question.rejected":
      return { kind: "answered", id: event.properties.requestID };
    case "v2.event":
      break;
    default:
      return undefined;
  }
  const { type, data } = event.properties;
  switch (type) {
    case "permission.asked":
      return { kind: "asked", request: permissionFromV2(data as never) };
    // A 2.x question is a form (docs/opencode-2x-behaviour.md "A blocked turn").
    case "form.created":
      return { kind: "asked", request: questionFromForm(data.form as never) };
    case "permission.replied":
      return typeof data.requestID === "string" ? { kind: "answered", id: data.requestID } : undefined;
    case "form.replied":
    case "form.cancelled": {
      const id = typeof data.id === "string" ? data.id : (data.form as { id?: unknown } | undefined)?.id;
      return typeof id === "string" ? { kind: "answered", id } : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * The watch signals of a turn on `sessionId` this event carries: the session's own progress
 * (busy, retry) and the requests of every session the watch follows (sub-agents' too).
 */
export function commonSignals(event: HubEvent, sessionId: string, followed: ReadonlySet<string>): WatchSignal[] {
  const activity = activityOf(event);
  if (activity?.sessionId === sessionId) {
    // A turn's progress says "working" once, at its start; a retry's end is the step's (step-finished).
    if (activity.state === "busy" && !activity.step) return [{ kind: "busy" }];
    if (activity.state === "retry") return [{ kind: "retry", attempt: activity.attempt, message: activity.message, next: activity.next }];
  }
  const request = requestChangeOf(event);
  if (request?.kind === "answered") return [{ kind: "request-answered", id: request.id }];
  if (request?.kind === "asked" && followed.has(request.request.sessionId)) return [{ kind: "request", request: request.request }];
  return [];
}
