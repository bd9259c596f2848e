// The framing of opencode 2.x's `GET /api/event`: each SSE `data:` line is one event object
// `{id, created, type, durable?, location?, data}` (no `payload` wrapper as in 1.x); heartbeats are
// SSE comments, which the parser drops. Reading, reconnecting and idle detection are the shared
// ones of ../event-stream.ts. Observed shapes: docs/opencode-2x-behaviour.md.
import type { EventSourceMessage } from "eventsource-parser";

export interface V2Event {
  /** `evt_…` */
  id?: string;
  /** Epoch ms. */
  created?: number;
  type: string;
  /** Present on events of the session's durable log: `aggregateID` is the session id, `seq` its position. */
  durable?: { aggregateID: string; seq: number; version: number };
  location?: { directory?: string; [key: string]: unknown };
  data: Record<string, unknown>;
}

/** The session an event belongs to, when it says. */
export function sessionOf(event: V2Event): string | undefined {
  const id = event.data.sessionID;
  if (typeof id === "string") return id;
  // form.created / form.replied carry the form itself, with its session inside.
  const form = event.data.form as { sessionID?: unknown } | undefined;
  if (typeof form?.sessionID === "string") return form.sessionID;
  return event.durable?.aggregateID;
}

export function parseV2Event(message: EventSourceMessage): V2Event | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message.data);
  } catch {
    return undefined; // not JSON: nothing we can use
  }
  if (typeof value !== "object" || value === null) return undefined;
  const event = value as Partial<V2Event>;
  if (typeof event.type !== "string") return undefined;
  return { ...event, type: event.type, data: typeof event.data === "object" && event.data !== null ? event.data : {} };
}
