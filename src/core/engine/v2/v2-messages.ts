// opencode 2.x messages (`GET /api/session/{id}/message`, docs/opencode-2x-behaviour.md "Messages")
// in the shape the core reads (1.x info + parts), so summaries, budgets and transcripts work
// unchanged. What 2.x does not record is left at a neutral value, never invented: a 2.x user
// message names no model (the next reply's is used), an assistant message names no parent (the
// user message before it in the list is its prompt, as for the turn machine, v2-events.ts), a
// step's changed files become a `patch` part (2.x lists them per step in `snapshot.files`).
import type { Message } from "../../model/message.js";
import type { Schemas } from "../../../client/types.js";
import { isFailedAutoCompaction, type V2MessageRecord } from "./v2-events.js";
import { startsTurnV2 } from "./v2-subagent-notice.js";

/** A 2.x message with the fields this mapping reads. */
export interface V2Message extends V2MessageRecord {
  text?: string;
  agent?: string;
  model?: { id: string; providerID: string; variant?: string };
  cost?: number;
  tokens?: { input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } };
  snapshot?: { start?: string; end?: string; files?: string[] };
  content?: V2Content[];
  summary?: string;
  /** A synthetic message's: what wrote it (`source: "subagent"` for a background sub-agent's notice). */
  metadata?: Record<string, unknown>;
}

export interface V2Content {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  state?: {
    status?: string;
    input?: Record<string, unknown>;
    content?: Array<{ type: string; text?: string }>;
    metadata?: Record<string, unknown>;
    error?: unknown;
  };
  time?: { created?: number; ran?: number; completed?: number };
}

/** 2.x error `{type, message, status?}` as 1.x's `{name, data: {message, statusCode?}}`. */
export function v1ErrorOf(raw: unknown): Schemas["AssistantMessage"]["error"] | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const { type, message, status } = raw as { type?: unknown; message?: unknown; status?: unknown };
  if (typeof type !== "string") return undefined;
  return {
    name: type,
    data: { message: typeof message === "string" ? message : "", ...(typeof status === "number" ? { statusCode: status } : {}) },
  } as unknown as Schemas["AssistantMessage"]["error"];
}

/** A session's 2.x messages (oldest first, in the server's list order) as core messages. */
export function messagesFromV2(list: readonly V2Message[], sessionId: string, directory: string): Message[] {
  const out: Message[] = [];
  let user: string | undefined;
  for (const [index, m] of list.entries()) {
    if (startsTurnV2(m)) {
      user = m.id;
      out.push(userMessage(m, sessionId, modelAfter(list, index)));
    } else if (m.type === "assistant") {
      out.push(assistantMessage(m, sessionId, user ?? "", directory));
    } else if (isFailedAutoCompaction(m)) {
      // Where the turn failed (v2-events.ts says why): a reply with the compaction's error, which
      // makes it terminal, marked a summary as 1.x marks its compaction's; no completion time, model,
      // agent or content. Its tokens and cost are the summary call's: the pre-release records none,
      // 2.0.26's document allows them.
      const { id, type, error, time, tokens, cost } = m;
      out.push(assistantMessage({ id, type, error, time, tokens, cost }, sessionId, user ?? "", directory));
    }
    // completed compactions and other kinds (other synthetic text among them) are no turn of anyone's
  }
  return out;
}

function modelAfter(list: readonly V2Message[], index: number): { providerID: string; modelID: string } {
  const next = list.slice(index + 1).find((m) => m.type === "assistant" && m.model);
  return next?.model ? { providerID: next.model.providerID, modelID: next.model.id } : { providerID: "", modelID: "" };
}

function userMessage(m: V2Message, sessionID: string, model: { providerID: string; modelID: string }): Message {
  const info = { id: m.id, sessionID, role: "user", time: { created: m.time?.created ?? 0 }, agent: m.agent ?? "", model } as unknown as Schemas["Message"];
  // opencode's own text (a sub-agent's notice) is marked as 1.x marks the text it writes into a prompt.
  const parts = m.text ? [part(m, 0, { type: "text", text: m.text, ...(m.type === "synthetic" ? { synthetic: true } : {}) })] : [];
  return { info, parts };
}

function assistantMessage(m: V2Message, sessionID: string, parentID: string, directory: string): Message {
  const t = m.tokens ?? {};
  const error = v1ErrorOf(m.error);
  const info = {
    id: m.id,
    sessionID,
    role: "assistant",
    parentID,
    time: { created: m.time?.created ?? 0, ...(m.time?.completed !== undefined ? { completed: m.time.completed } : {}) },
    modelID: m.model?.id ?? "",
    providerID: m.model?.providerID ?? "",
    ...(m.model?.variant ? { variant: m.model.variant } : {}),
    agent: m.agent ?? "",
    mode: m.agent ?? "",
    path: { cwd: directory, root: directory },
    cost: m.cost ?? 0,
    tokens: { input: t.input ?? 0, output: t.output ?? 0, reasoning: t.reasoning ?? 0, cache: { read: t.cache?.read ?? 0, write: t.cache?.write ?? 0 } },
    ...(m.finish ? { finish: m.finish } : {}),
    ...(error ? { error } : {}),
    ...(m.type === "compaction" ? { summary: true } : {}),
  } as unknown as Schemas["Message"];
  const parts: Schemas["Part"][] = (m.content ?? []).flatMap((c, i) => contentPart(m, i, c));
  const files = m.snapshot?.files ?? [];
  if (files.length > 0) parts.push(part(m, parts.length + 1000, { type: "patch", hash: m.snapshot?.end ?? "", files }));
  return { info, parts };
}

function contentPart(m: V2Message, index: number, c: V2Content): Schemas["Part"][] {
  if (c.type === "text" && typeof c.text === "string") return [part(m, index, { type: "text", text: c.text })];
  if (c.type === "reasoning" && typeof c.text === "string") return [part(m, index, { type: "reasoning", text: c.text, time: { start: 0 } })];
  if (c.type !== "tool") return [];
  const s = c.state ?? {};
  const status = s.status === "completed" || s.status === "error" ? s.status : "running";
  const output = (s.content ?? []).flatMap((x) => (x.type === "text" && typeof x.text === "string" ? [x.text] : [])).join("\n");
  const time = { start: c.time?.created ?? 0, ...(c.time?.completed !== undefined ? { end: c.time.completed } : {}) };
  const errorText =
    s.error && typeof s.error === "object" && typeof (s.error as { message?: unknown }).message === "string"
      ? (s.error as { message: string }).message
      : String(s.error ?? "");
  const state =
    status === "completed"
      ? { status, input: s.input ?? {}, output, title: "", metadata: s.metadata ?? {}, time: { ...time, end: time.end ?? time.start } }
      : status === "error"
        ? { status, input: s.input ?? {}, error: errorText, metadata: s.metadata ?? {}, time: { ...time, end: time.end ?? time.start } }
        : { status, input: s.input ?? {}, time };
  return [part(m, index, { type: "tool", callID: c.id ?? `call_${index}`, tool: c.name ?? "unknown", state })];
}

/** A mapped part's id: 2.x content items have none, so it is the message id and the item's place. */
export function partIdV2(messageId: string, index: number): string {
  return `${messageId}:${String(index).padStart(4, "0")}`;
}

function part(m: V2Message, index: number, fields: Record<string, unknown>): Schemas["Part"] {
  return { id: partIdV2(m.id, index), sessionID: "", messageID: m.id, ...fields } as unknown as Schemas["Part"];
}
