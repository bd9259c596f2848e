// What opencode 2.x events mean for whoever follows a session's turn (docs/opencode-2x-behaviour.md
// "Events"): the outcome evidence through engine/v2/v2-events.ts (`session.execution.*` ends a turn),
// progress from the step and tool events, retries from `session.retry.scheduled`, permission
// requests and question forms, and sub-agent sessions (2.0.26 `session.created` with `parentID`).
// 2.x streams deltas, not whole messages; the durable step, text and tool events still describe
// every message, so the turn's messages are rebuilt from them (v2-seen-turn.ts) and a summary reads
// the session from the server only when that record declines.
import type { Message } from "../../model/message.js";
import { sessionOf } from "../../../client/v2/event-framing.js";
import { FILE_TOOLS, filePathOf } from "../../model/file-tools.js";
import { V2TurnEvents } from "./v2-events.js";
import type { SessionTranslator, UsageSignal, UsageTranslator, WatchSignal } from "../engine.js";
import type { HubEvent } from "../hub-events.js";
import { messagesFromV2 } from "./v2-messages.js";
import { commonSignals } from "../server-events.js";
import { V2SeenTurn } from "./v2-seen-turn.js";

export class V2Signals implements SessionTranslator {
  private readonly turn: V2TurnEvents;
  /** Tool calls by id: the name and input arrive before the result. */
  private readonly calls = new Map<string, { name: string; input: Record<string, unknown> }>();

  /** The messages as the durable events tell them. */
  readonly seen: V2SeenTurn;

  /** The session's directory, which the mapped messages name as their working directory. */
  private directory: string | undefined;

  /**
   * `directory` is looked up while the turn runs (a read of the session, unless the engine created
   * it), so that starting a watch never waits on the server.
   */
  constructor(
    readonly sessionId: string,
    directory: string | Promise<string>,
  ) {
    this.turn = new V2TurnEvents(sessionId);
    this.seen = new V2SeenTurn(sessionId);
    if (typeof directory === "string") this.directory = directory;
    else directory.then((d) => (this.directory = d)).catch(() => undefined);
  }

  /** `partial`: what was seen of a turn that will never end (its server is gone), whole or not. */
  turnMessages(o: { partial?: boolean } = {}): Message[] | undefined {
    const raw = this.directory === undefined ? undefined : this.seen.messages(o);
    return raw && messagesFromV2(raw, this.sessionId, this.directory!);
  }

  translate(hubEvent: HubEvent, followed: ReadonlySet<string>): WatchSignal[] {
    if (hubEvent.type === "conductor.reconnected") this.seen.gap();
    if (hubEvent.type !== "v2.event") return [];
    const event = hubEvent.properties;
    // First, so that the outcome's signal finds its messages complete.
    this.seen.apply(event);
    const data = event.data;
    const session = sessionOf(event);
    // Busy, retry and the permission requests and questions (forms) read the same on both majors.
    const out: WatchSignal[] = commonSignals(hubEvent, this.sessionId, followed);
    switch (event.type) {
      case "session.created": {
        const parent = typeof data.parentID === "string" ? data.parentID : undefined;
        if (parent && followed.has(parent) && session) out.push({ kind: "child", parentId: parent, sessionId: session });
        break;
      }
      case "session.step.ended":
        if (session === this.sessionId) out.push({ kind: "step-finished" });
        break;
      case "session.tool.input.started":
      case "session.tool.called":
      case "session.tool.success":
      case "session.tool.failed":
        if (session && followed.has(session)) out.push(...this.tool(event.type, data));
        break;
      default:
        break;
    }
    for (const turnEvent of this.turn.translate(event)) out.push({ kind: "turn", event: turnEvent });
    return out;
  }

  private tool(type: string, data: Record<string, unknown>): WatchSignal[] {
    const callId = typeof data.id === "string" ? data.id : undefined;
    if (!callId) return [];
    if (type === "session.tool.input.started") {
      this.calls.set(callId, { name: typeof data.name === "string" ? data.name : "tool", input: {} });
      return [];
    }
    if (type === "session.tool.called") {
      const name = typeof data.name === "string" ? data.name : (this.calls.get(callId)?.name ?? "tool");
      const input = data.input && typeof data.input === "object" ? (data.input as Record<string, unknown>) : {};
      this.calls.set(callId, { name, input });
      return [{ kind: "tool", callId, tool: name, status: "running" }];
    }
    const call = this.calls.get(callId);
    const tool = call?.name ?? (typeof data.name === "string" ? data.name : "tool");
    if (type === "session.tool.failed") return [{ kind: "tool", callId, tool, status: "error" }];
    const metadata = data.metadata && typeof data.metadata === "object" ? (data.metadata as Record<string, unknown>) : undefined;
    const file = FILE_TOOLS.has(tool) ? filePathOf(call?.input ?? {}, metadata) : undefined;
    return [{ kind: "tool", callId, tool, status: "completed", ...(file ? { file } : {}) }];
  }
}

/** Usage on 2.x: `session.step.ended` carries the step's tokens and cost; its prompt is the input promoted last. */
export class V2Usage implements UsageTranslator {
  private readonly promoted = new Map<string, string>();

  translate(hubEvent: HubEvent): UsageSignal[] {
    if (hubEvent.type !== "v2.event") return [];
    const { type, data } = hubEvent.properties;
    const sessionId = sessionOf(hubEvent.properties);
    if (!sessionId) return [];
    if (type === "session.created" && typeof data.parentID === "string") return [{ kind: "child", parentId: data.parentID, sessionId }];
    if (type === "session.input.promoted" && typeof data.inputID === "string") {
      this.promoted.delete(sessionId);
      this.promoted.set(sessionId, data.inputID);
      if (this.promoted.size > 1_000) this.promoted.delete(this.promoted.keys().next().value!);
      return [];
    }
    if (type !== "session.step.ended" || typeof data.assistantMessageID !== "string") return [];
    const t = (data.tokens ?? {}) as { input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } };
    const tokens = (t.input ?? 0) + (t.output ?? 0) + (t.reasoning ?? 0) + (t.cache?.read ?? 0) + (t.cache?.write ?? 0);
    const parentId = this.promoted.get(sessionId);
    return [
      {
        kind: "usage",
        sessionId,
        messageId: data.assistantMessageID,
        ...(parentId ? { parentId } : {}),
        tokens,
        cost: typeof data.cost === "number" ? data.cost : 0,
      },
    ];
  }
}
