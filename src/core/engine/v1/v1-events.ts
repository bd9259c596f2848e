// The v1 engine's side of the turn machine: opencode 1.x events and messages as TurnEvents and
// MessageEvidence. Tool errors, and the parts that make a user message carry on the turn before it
// (an automatic compaction), arrive as part updates apart from their message's updates, so the
// translation keeps them per message.
import type { HubEvent } from "../hub-events.js";
import type { MessageInfo } from "../../model/message.js";
import type { TurnEvent } from "../../model/turn-event.js";
import { continuesTurn, evidenceOfInfo, recordedError } from "../../model/evidence.js";

/** Translates one session's events; keeps what a message's later updates need (its tool errors). */
export class V1TurnEvents {
  private readonly infos = new Map<string, MessageInfo>();
  private readonly toolErrors = new Map<string, Map<string, string>>();
  /** User messages a part said carry on the turn before them (after an automatic compaction). */
  private readonly continuing = new Set<string>();

  constructor(readonly sessionId: string) {}

  translate(event: HubEvent): TurnEvent | undefined {
    switch (event.type) {
      case "session.status":
        if (event.properties.sessionID !== this.sessionId) return undefined;
        return { type: "status", status: event.properties.status.type };
      case "session.idle":
        return event.properties.sessionID === this.sessionId ? { type: "status", status: "idle" } : undefined;
      case "session.error": {
        if (event.properties.sessionID !== this.sessionId) return undefined;
        const error = recordedError(event.properties.error);
        return error ? { type: "error", error } : undefined;
      }
      case "message.updated":
        if (event.properties.sessionID !== this.sessionId) return undefined;
        this.infos.set(event.properties.info.id, event.properties.info);
        return this.messageEvent(event.properties.info.id);
      case "message.removed":
        if (event.properties.sessionID !== this.sessionId) return undefined;
        this.infos.delete(event.properties.messageID);
        return { type: "message.removed", id: event.properties.messageID };
      case "message.part.updated": {
        const part = event.properties.part;
        if (part.sessionID !== this.sessionId) return undefined;
        if (continuesTurn(part)) {
          this.continuing.add(part.messageID);
          return this.messageEvent(part.messageID);
        }
        if (part.type !== "tool" || part.state.status !== "error") return undefined;
        let errors = this.toolErrors.get(part.messageID);
        if (!errors) this.toolErrors.set(part.messageID, (errors = new Map()));
        errors.set(part.id, part.state.error);
        return this.messageEvent(part.messageID);
      }
      default:
        return undefined;
    }
  }

  private messageEvent(id: string): TurnEvent | undefined {
    const info = this.infos.get(id);
    if (!info) return undefined;
    return { type: "message", message: evidenceOfInfo(info, [...(this.toolErrors.get(id)?.values() ?? [])], this.continuing.has(id)) };
  }
}
