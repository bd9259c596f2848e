// The events the core's event hub carries, whichever engine produced them: 1.x events as opencode
// sends them, 2.x events wrapped whole (`v2.event`), and the hub's own notices (reconnected,
// disconnected, lost). Kept apart from event-hub.ts so engines can name them without a circle.
import type { DisconnectedEvent, OpencodeEvent, ReconnectedEvent } from "../../client/types.js";
import type { V2Event } from "../../client/v2/events.js";
import type { RecordedError } from "../turns/record.js";

/** The server stopped answering: turns that were running will get no recorded end from it. */
export interface ServerLostEvent {
  type: "conductor.lost";
  properties: { error: RecordedError };
}

/** An opencode 2.x event, as `GET /api/event` sent it (the v2 engine's translators read it). */
export interface V2HubEvent {
  type: "v2.event";
  properties: V2Event;
  directory?: undefined;
}

export type HubEvent = OpencodeEvent | ReconnectedEvent | DisconnectedEvent | ServerLostEvent | V2HubEvent;
