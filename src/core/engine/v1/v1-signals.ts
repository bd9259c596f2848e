// What opencode 1.x events mean for whoever follows a session's turn (docs/opencode-behaviour.md §2,
// §5): evidence for the turn machine (engine/v1/v1-events.ts), progress, the permission requests and
// questions that block it, sub-agent sessions, and the messages themselves (1.x streams whole
// messages, so a turn we prompted can be summarised without reading the session again).
import { FILE_TOOLS, filePathOf } from "../../model/file-tools.js";
import type { V1TurnEvents } from "./v1-events.js";
import type { SessionTranslator, UsageSignal, UsageTranslator, WatchSignal } from "../engine.js";
import type { HubEvent } from "../hub-events.js";
import { commonSignals } from "../server-events.js";

export class V1Signals implements SessionTranslator {
  private readonly toolStatus = new Map<string, string>();

  constructor(private readonly turn: V1TurnEvents) {}

  translate(event: HubEvent, followed: ReadonlySet<string>): WatchSignal[] {
    const sessionId = this.turn.sessionId;
    // Busy, retry and the permission requests and questions read the same on both majors.
    const out: WatchSignal[] = commonSignals(event, sessionId, followed);
    switch (event.type) {
      case "session.created":
      case "session.updated": {
        const info = event.properties.info;
        if (info.parentID && followed.has(info.parentID)) out.push({ kind: "child", parentId: info.parentID, sessionId: info.id });
        break;
      }
      case "message.updated":
        if (event.properties.sessionID === sessionId) out.push({ kind: "seen-message", info: event.properties.info });
        break;
      case "message.removed":
        if (event.properties.sessionID === sessionId) out.push({ kind: "seen-removed", messageId: event.properties.messageID });
        break;
      case "message.part.updated": {
        const part = event.properties.part;
        if (part.sessionID === sessionId) {
          out.push({ kind: "seen-part", part });
          if (part.type === "step-finish") out.push({ kind: "step-finished" });
        }
        if (followed.has(part.sessionID) && part.type === "tool") {
          const { status } = part.state;
          if (status !== "pending" && this.toolStatus.get(part.callID) !== status) {
            this.toolStatus.set(part.callID, status);
            const title = "title" in part.state && typeof part.state.title === "string" ? part.state.title : undefined;
            const file = status === "completed" && FILE_TOOLS.has(part.tool) ? filePathOf(part.state.input, part.state.metadata) : undefined;
            out.push({ kind: "tool", callId: part.callID, tool: part.tool, status, ...(title ? { title } : {}), ...(file ? { file } : {}) });
          }
        }
        break;
      }
      case "message.part.removed":
        if (event.properties.sessionID === sessionId)
          out.push({ kind: "seen-removed", messageId: event.properties.messageID, partId: event.properties.partID });
        break;
      default:
        break;
    }
    // The translation sees every event (it keeps message state); the machine gets the turn's.
    const turnEvent = this.turn.translate(event);
    if (turnEvent) out.push({ kind: "turn", event: turnEvent });
    return out;
  }
}

/** Usage on 1.x: each assistant message update carries its tokens and cost so far. */
export class V1Usage implements UsageTranslator {
  translate(event: HubEvent): UsageSignal[] {
    if (event.type === "session.created" || event.type === "session.updated") {
      const info = event.properties.info;
      return info.parentID ? [{ kind: "child", parentId: info.parentID, sessionId: info.id }] : [];
    }
    if (event.type !== "message.updated") return [];
    const info = event.properties.info;
    if (info.role !== "assistant") return [];
    const k = info.tokens;
    const tokens = k.total ?? k.input + k.output + k.reasoning + k.cache.read + k.cache.write;
    return [{ kind: "usage", sessionId: info.sessionID, messageId: info.id, parentId: info.parentID, tokens, cost: info.cost ?? 0 }];
  }
}
