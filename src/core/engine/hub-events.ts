// The events the core's event hub carries, whichever engine produced them: 1.x events as opencode
// sends them, 2.x events wrapped whole (`v2.event`), and the hub's own notices (reconnected,
// disconnected, unreachable, lost). Kept apart from event-hub.ts so engines can name them without a circle.
import type { RecordedError } from "../model/turn-outcome.js";
import type { DisconnectedEvent, OpencodeEvent, ReconnectedEvent } from "../../client/types.js";
import type { V2Event } from "../../client/v2/event-framing.js";

/** The server's process is gone (its port refuses connections): turns that were running there will never get a recorded end. */
export interface ServerLostEvent {
  type: "conductor.lost";
  properties: { error: RecordedError };
}

/**
 * The server does not answer (hung, stopped, cut off) but may still be there: what its turns do is
 * unknown until it answers again (the stream reconnects by itself and says `conductor.reconnected`).
 */
export interface ServerUnreachableEvent {
  type: "conductor.unreachable";
  properties: { error: RecordedError };
}

/** An opencode 2.x event, as `GET /api/event` sent it (the v2 engine's translators read it). */
export interface V2HubEvent {
  type: "v2.event";
  properties: V2Event;
  directory?: undefined;
}

export type HubEvent = OpencodeEvent | ReconnectedEvent | DisconnectedEvent | ServerLostEvent | ServerUnreachableEvent | V2HubEvent;
