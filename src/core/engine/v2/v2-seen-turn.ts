// A 2.x session's messages as its durable events tell them (docs/opencode-2x-behaviour.md "A turn"),
// so a turn we followed from its start can be summarised the moment its outcome event arrives,
// without reading the session again (the 1.x watch does the same with 1.x's whole-message events).
//
// It only vouches for what it saw whole. The session's durable events are numbered (`durable.seq`);
// the list is given only when the execution that just ended started after we subscribed, no number
// was skipped, no reconnect lost events, and every durable event was of a kind mapped here. Anything
// else (a retry into the same message, a compaction, a revert, a kind this file does not know) makes
// it decline, and the summary reads the session from the server as before. A unit test replays every
// 2.x recording and compares this list with the server's own; an e2e test does the same live.
import type { V2Event } from "../../../client/v2/event-framing.js";
import type { V2Content, V2Message } from "./v2-messages.js";

/**
 * Durable kinds that add no message the core reads: they change the session row, or append a
 * message kind the core's mapping skips (model/agent switches, system text, the synthetic text of
 * loaded instructions, skill, shell).
 */
const NO_MESSAGE = new Set([
  "session.created",
  "session.renamed",
  "session.moved",
  "session.usage.recorded",
  "session.agent.selected",
  "session.model.selected",
  "session.instructions.updated",
  "session.synthetic",
  "session.skill.activated",
  "session.shell.started",
  "session.shell.ended",
  "session.tool.input.ended",
  "session.tool.progress",
  "session.retry.scheduled",
]);
const OUTCOMES = new Set(["session.execution.succeeded", "session.execution.failed", "session.execution.interrupted"]);

type Data = Record<string, unknown>;
type ToolOutput = NonNullable<NonNullable<V2Content["state"]>["content"]>;
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const obj = (v: unknown): Data | undefined => (v && typeof v === "object" ? (v as Data) : undefined);

/** What a prompt admitted into the session will become once promoted. */
interface Admitted {
  type: "user" | "synthetic";
  text: string;
  /** A synthetic input's (a background sub-agent's notice says so here: v2-subagent-notice.ts). */
  metadata?: Record<string, unknown>;
}

/**
 * Mirrors how the 2.x server projects its durable session events into messages (one message per
 * user input at its promotion, one per model step; content appended in event order; list order
 * is event order), for the kinds the core reads.
 */
export class V2SeenTurn {
  private readonly list: V2Message[] = [];
  private readonly byId = new Map<string, V2Message>();
  private readonly admitted = new Map<string, Admitted>();
  private lastSeq: number | undefined;
  /** An execution started after we subscribed and has not ended yet. */
  private open = false;
  /** The last execution's outcome arrived, and its start was seen. */
  private whole = false;
  /** Why the events can no longer be vouched for (the summary reads the server). */
  private declined: string | undefined;

  constructor(readonly sessionId: string) {}

  /** Events were lost while the stream was down. */
  gap(): void {
    this.declined ??= "reconnected";
  }

  /** Why `messages()` declines, for tests and logs. */
  get reason(): string | undefined {
    return this.declined ?? (this.whole ? undefined : "no whole execution seen");
  }

  /**
   * The messages of what was seen (oldest first, in the server's list order), when complete;
   * `partial`: also before the execution's end (for a turn whose server is gone).
   */
  messages(o: { partial?: boolean } = {}): V2Message[] | undefined {
    return this.declined || (!this.whole && !o.partial) ? undefined : this.list.map((m) => structuredClone(m));
  }

  apply(event: V2Event): void {
    if (!event.durable || event.durable.aggregateID !== this.sessionId || this.declined) return;
    const { seq } = event.durable;
    if (this.lastSeq !== undefined && seq !== this.lastSeq + 1) return this.decline(`events ${this.lastSeq + 1}..${seq - 1} missed`);
    this.lastSeq = seq;
    const data = event.data;
    const at = event.created ?? 0;
    if (OUTCOMES.has(event.type)) {
      this.whole = this.open;
      this.open = false;
      return;
    }
    if (NO_MESSAGE.has(event.type)) return;
    switch (event.type) {
      case "session.execution.started":
        this.open = true;
        this.whole = false;
        return;
      case "session.input.admitted":
        return this.admit(data);
      case "session.input.promoted":
        return this.promote(data, at);
      case "session.step.started":
        return this.stepStarted(data, at);
      case "session.step.ended":
      case "session.step.failed":
        return this.owned(data, (m) => stepEnded(m, event.type === "session.step.failed", data, at));
      case "session.text.started":
        return this.owned(data, (m) => void m.content!.push({ type: "text", text: "" }));
      case "session.text.ended":
        return this.owned(data, (m) => {
          const part = m.content!.findLast((c) => c.type === "text");
          if (part) part.text = str(data.text) ?? "";
        });
      case "session.reasoning.started":
        return this.owned(data, (m) => void m.content!.push({ type: "reasoning", text: "", time: { created: at } }));
      case "session.reasoning.ended":
        return this.owned(data, (m) => {
          const part = m.content!.findLast((c) => c.type === "reasoning" && !c.time?.completed);
          if (!part) return;
          part.text = str(data.text) ?? "";
          part.time = { created: part.time?.created ?? at, completed: at };
        });
      case "session.tool.input.started":
        return this.owned(data, (m) => {
          m.content!.push({ type: "tool", id: str(data.id), name: str(data.name), time: { created: at }, state: { status: "streaming" } });
        });
      case "session.tool.called":
      case "session.tool.success":
      case "session.tool.failed":
        return this.owned(data, (m) => toolEvent(m, event.type, data, at));
      default:
        // compaction, revert, fork, deletion, or a kind newer than this file: read the server
        return this.decline(`event ${event.type.slice(0, 60)}`);
    }
  }

  private admit(data: Data): void {
    const input = obj(data.input);
    const id = str(data.inputID);
    const type = input?.type;
    if (!id || (type !== "user" && type !== "synthetic")) return this.decline(`input of kind ${String(type).slice(0, 40)}`);
    const metadata = obj(obj(input?.data)?.metadata);
    this.admitted.set(id, { type, text: str(obj(input?.data)?.text) ?? "", ...(metadata ? { metadata } : {}) });
  }

  private promote(data: Data, at: number): void {
    const id = str(data.inputID);
    const input = id === undefined ? undefined : this.admitted.get(id);
    if (id === undefined || !input) return this.decline("a prompt admitted before we subscribed");
    this.admitted.delete(id);
    // A synthetic input becomes a synthetic message, as the server projects it; the core's mapping
    // reads only a sub-agent's notice of those (a prompt opencode wrote).
    this.add({ id, type: input.type, text: input.text, ...(input.metadata ? { metadata: input.metadata } : {}), time: { created: at } });
  }

  private stepStarted(data: Data, at: number): void {
    const id = str(data.assistantMessageID);
    if (!id) return this.decline("a step without a message");
    const model = obj(data.model) as V2Message["model"] | undefined;
    const snapshot = str(data.snapshot);
    const existing = this.byId.get(id);
    if (existing) {
      // A retry starts the same message again: its content stays, its end is cleared.
      existing.agent = str(data.agent);
      existing.model = model;
      existing.error = undefined;
      existing.finish = undefined;
      existing.time = { created: existing.time?.created };
      if (snapshot) existing.snapshot = { ...existing.snapshot, start: snapshot };
      return;
    }
    const current = this.list.findLast((m) => m.type === "assistant");
    if (current && !current.time?.completed) current.time = { ...current.time, completed: at };
    this.add({
      id,
      type: "assistant",
      ...(str(data.agent) ? { agent: str(data.agent) } : {}),
      ...(model ? { model } : {}),
      ...(snapshot ? { snapshot: { start: snapshot } } : {}),
      content: [],
      time: { created: at },
    });
  }

  private add(m: V2Message): void {
    this.list.push(m);
    this.byId.set(m.id, m);
  }

  /** Applies `change` to the step's message; one we never saw start cannot be vouched for. */
  private owned(data: Data, change: (m: V2Message) => void): void {
    const m = this.byId.get(String(data.assistantMessageID));
    if (m?.type !== "assistant") return this.decline("an event of a step that started before we subscribed");
    change(m);
  }

  private decline(why: string): void {
    this.declined ??= why;
  }
}

function stepEnded(m: V2Message, failed: boolean, data: Data, at: number): void {
  m.time = { ...m.time, completed: at };
  m.finish = failed ? "error" : str(data.finish);
  if (failed) m.error = data.error;
  if (!failed || (data.cost !== undefined && data.tokens !== undefined)) {
    m.cost = typeof data.cost === "number" ? data.cost : m.cost;
    m.tokens = (obj(data.tokens) as V2Message["tokens"]) ?? m.tokens;
  }
  const files = Array.isArray(data.files) ? data.files.filter((f): f is string => typeof f === "string") : undefined;
  const end = str(data.snapshot);
  if (end || files) m.snapshot = { ...m.snapshot, end, files };
}

/** A tool call's `called`, `success` or `failed` event applied to its content item, as the server projects it. */
export function toolEvent(m: V2Message, type: string, data: Data, at: number): void {
  const part = m.content!.findLast((c) => c.type === "tool" && c.id === data.id);
  if (!part?.state || !part.time) return;
  const status = part.state.status;
  if (type === "session.tool.called") {
    part.time.ran = at;
    part.state = { status: "running", input: obj(data.input) ?? {}, metadata: {} };
    return;
  }
  const extra = {
    ...(Array.isArray(data.content) ? { content: data.content as ToolOutput } : {}),
    ...(obj(data.metadata) ? { metadata: obj(data.metadata) } : {}),
  };
  if (type === "session.tool.success" && status === "running") {
    part.time.completed = at;
    part.state = { status: "completed", input: part.state.input ?? {}, ...extra };
  } else if (type === "session.tool.failed" && (status === "running" || status === "streaming")) {
    part.time.completed = at;
    part.state = { status: "error", input: status === "streaming" ? {} : (part.state.input ?? {}), error: data.error, ...extra };
  }
}
