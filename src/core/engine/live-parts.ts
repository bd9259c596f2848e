// A session's transcript as it streams, in the parts the engines' messages have (1.x parts; the
// v2 engine maps 2.x content into the same shapes, v2-messages.ts), so a live view and a later
// read of the session show the same part under the same id. 1.x streams whole parts
// (`message.part.updated`) and text deltas (`message.part.delta`). 2.x streams events that the
// server projects into its messages (docs/opencode-2x-behaviour.md "Messages are the durable events,
// projected"): each `*.started` appends a content item, `*.delta` grows the latest text or
// reasoning, `*.ended` and the tool events fill it in. A 2.x part is named by its message and its
// place, so only a step seen from its start can be streamed: of a step already under way when
// following began (or when the stream dropped), nothing is streamed, rather than a part under a
// wrong id; a read of the session shows it.
import type { Schemas } from "../../client/types.js";
import { sessionOf, type V2Event } from "../../client/v2/event-framing.js";
import type { HubEvent } from "./hub-events.js";
import { messagesFromV2, partIdV2, type V2Content, type V2Message } from "./v2/v2-messages.js";
import { toolEvent } from "./v2/v2-seen-turn.js";
import { startsTurnV2 } from "./v2/v2-subagent-notice.js";

export type LivePart =
  /** A part, new or changed, whole. */
  | { sessionId: string; part: Schemas["Part"]; role?: "user" | "assistant" }
  /** Text appended to a part already sent (`field`: the part's field that grows, `text`). */
  | { sessionId: string; delta: { partID: string; messageID: string; field: string; delta: string } };

/** Which sessions to stream (the others' events are dropped, and nothing of them is kept). */
export type WantedSession = (sessionId: string) => boolean;

export class LiveParts {
  private readonly v2 = new V2LiveParts();

  translate(event: HubEvent, wanted: WantedSession): LivePart[] {
    switch (event.type) {
      case "message.part.updated": {
        const part = event.properties.part;
        return wanted(part.sessionID) ? [{ sessionId: part.sessionID, part }] : [];
      }
      case "message.part.delta": {
        const { sessionID, partID, messageID, field, delta } = event.properties;
        return wanted(sessionID) ? [{ sessionId: sessionID, delta: { partID, messageID, field, delta } }] : [];
      }
      case "conductor.reconnected":
        this.v2.gap();
        return [];
      case "v2.event":
        return this.v2.translate(event.properties, wanted);
      default:
        return [];
    }
  }
}

const MAX_KEPT = 500;
type Data = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

class V2LiveParts {
  /** Prompts admitted and not promoted yet (a sub-agent's notice among them): each becomes a user message at promotion. */
  private readonly inputs = new Map<string, V2Message>();
  /** Assistant messages (one per step) seen from their start, by id. */
  private readonly steps = new Map<string, V2Message>();

  /** Events were lost: the places of content items in steps under way are no longer known. */
  gap(): void {
    this.steps.clear();
    this.inputs.clear();
  }

  translate(event: V2Event, wanted: WantedSession): LivePart[] {
    const sessionId = sessionOf(event);
    if (!sessionId || !wanted(sessionId)) return [];
    const data = event.data;
    const at = event.created ?? Date.now();
    switch (event.type) {
      case "session.input.admitted": {
        const input = data.input as { type?: unknown; data?: { text?: unknown; metadata?: unknown } } | undefined;
        const id = str(data.inputID);
        const metadata = input?.data?.metadata as Record<string, unknown> | undefined;
        const message: V2Message = { id: id ?? "", type: String(input?.type), text: str(input?.data?.text) ?? "", ...(metadata ? { metadata } : {}) };
        if (id && startsTurnV2(message)) keep(this.inputs, id, message);
        return [];
      }
      case "session.input.promoted": {
        const id = str(data.inputID);
        const input = id === undefined ? undefined : this.inputs.get(id);
        if (id === undefined || input === undefined) return [];
        this.inputs.delete(id);
        return this.emit(sessionId, input, 0, "user");
      }
      case "session.step.started": {
        const id = str(data.assistantMessageID);
        // A retry starts the same message again, its content kept (as the server keeps it).
        if (id && !this.steps.has(id)) keep(this.steps, id, { id, type: "assistant", content: [] });
        return [];
      }
      case "session.text.started":
        return this.append(sessionId, data, { type: "text", text: "" });
      case "session.reasoning.started":
        return this.append(sessionId, data, { type: "reasoning", text: "", time: { created: at } });
      case "session.tool.input.started":
        return this.append(sessionId, data, { type: "tool", id: str(data.id), name: str(data.name), time: { created: at }, state: { status: "streaming" } });
      case "session.text.delta":
      case "session.reasoning.delta":
        return this.delta(sessionId, data, event.type === "session.text.delta" ? "text" : "reasoning");
      case "session.text.ended":
      case "session.reasoning.ended":
        return this.ended(sessionId, data, event.type === "session.text.ended" ? "text" : "reasoning");
      case "session.tool.called":
      case "session.tool.success":
      case "session.tool.failed": {
        const m = this.steps.get(String(data.assistantMessageID));
        const index = m?.content!.findLastIndex((c) => c.type === "tool" && c.id === data.id) ?? -1;
        if (!m || index < 0) return [];
        toolEvent(m, event.type, data, at);
        return this.emit(sessionId, m, index);
      }
      default:
        return [];
    }
  }

  private append(sessionId: string, data: Data, item: V2Content): LivePart[] {
    const m = this.steps.get(String(data.assistantMessageID));
    if (!m) return [];
    m.content!.push(item);
    return this.emit(sessionId, m, m.content!.length - 1);
  }

  private delta(sessionId: string, data: Data, type: "text" | "reasoning"): LivePart[] {
    const m = this.steps.get(String(data.assistantMessageID));
    const index = m?.content!.findLastIndex((c) => c.type === type) ?? -1;
    const delta = str(data.delta);
    if (!m || index < 0 || !delta) return [];
    const item = m.content![index]!;
    item.text = (item.text ?? "") + delta;
    return [{ sessionId, delta: { partID: partIdV2(m.id, index), messageID: m.id, field: "text", delta } }];
  }

  private ended(sessionId: string, data: Data, type: "text" | "reasoning"): LivePart[] {
    const m = this.steps.get(String(data.assistantMessageID));
    const index = m?.content!.findLastIndex((c) => c.type === type) ?? -1;
    if (!m || index < 0) return [];
    m.content![index]!.text = str(data.text) ?? "";
    return this.emit(sessionId, m, index);
  }

  /** Item `index` of `m` as the engine's messages map it (same id, same shape). */
  private emit(sessionId: string, m: V2Message, index: number, role: "user" | "assistant" = "assistant"): LivePart[] {
    const id = partIdV2(m.id, index);
    const part = messagesFromV2([m], sessionId, "")[0]?.parts.find((p) => p.id === id);
    return part ? [{ sessionId, part: { ...part, sessionID: sessionId }, role }] : [];
  }
}

/** Adds to a map that forgets its oldest entries beyond MAX_KEPT. */
function keep<V>(map: Map<string, V>, key: string, value: V): void {
  map.set(key, value);
  if (map.size > MAX_KEPT) map.delete(map.keys().next().value!);
}
