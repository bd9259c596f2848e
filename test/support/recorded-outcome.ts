// What a truthful answer about a turn says, derived only from what opencode recorded: its messages
// and parts (as read back, or as its events told them), its errors, its status and its pending
// requests. A small pure function with its own rules, written from opencode's record and not from
// the conductor's code, so that a test compares the conductor's report with opencode, never with an
// earlier answer of ours. Used by the tools' unit tests on recorded traffic (recordedCallOutcome)
// and by the outcome oracle on a session re-read from a live server (turnOutcome, turnOutcomeV2).
import type { Fixture, Interaction } from "./fixture.js";

/** A 1.x message as `GET /session/{id}/message` lists it (loosely typed: only what the rules read). */
export interface MessageEvidence {
  info: {
    id: string;
    role: string;
    sessionID?: string;
    parentID?: string;
    finish?: string;
    error?: { name: string; data?: { message?: string; statusCode?: number } };
    time?: { created?: number; completed?: number };
    tokens?: { total?: number; input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } };
    cost?: number;
    modelID?: string;
    providerID?: string;
  };
  parts: Array<{ id: string; type: string; text?: string; synthetic?: boolean; tool?: string; state?: { status: string; error?: string } }>;
}

export type TurnStatus = "done" | "error" | "interrupted" | "running" | "blocked" | "budget_exceeded";

export interface TurnOutcome {
  status: TurnStatus;
  /** The error opencode recorded on the turn's last reply (or the stopped tool's, as `ToolStopped`). */
  error?: { name: string; message?: string; statusCode?: number };
  /** The text of the turn's last reply with text (what the model said last), "" when none. */
  answer: string;
  /** Tokens of every reply of the turn, as opencode counted them. */
  tokens: number;
  cost: number;
  /** The turn's replies. */
  replies: number;
}

export interface TurnFacts {
  /** opencode said the session is idle (an idle event, or a status read without it) after the turn started. */
  idle: boolean;
  /** A permission or question of the session was asked and not yet answered. */
  pending?: boolean;
  /** A prompt was sent whose user message opencode had not shown yet: the new turn has not begun on record. */
  promptNotYetShown?: boolean;
  /** A `session.error` without any reply (opencode 1.x for an unknown agent or model). */
  sessionError?: { name: string; message?: string };
  /** The caller's caps: a turn whose recorded usage passed one is `budget_exceeded`. */
  maxTokens?: number;
  maxCostUsd?: number;
}

const ABORTED = "MessageAbortedError";

/** The outcome of a 1.x session's last turn (its replies after the last user message). */
export function turnOutcome(messages: MessageEvidence[], facts: TurnFacts): TurnOutcome {
  const lastUser = messages.findLastIndex((m) => m.info.role === "user");
  const replies = messages.slice(lastUser + 1).filter((m) => m.info.role === "assistant");
  const last = replies.at(-1);
  const tokens = replies.reduce((n, m) => n + tokensOf(m.info.tokens), 0);
  const cost = replies.reduce((n, m) => n + (m.info.cost ?? 0), 0);
  const texts = replies.map((m) => textOf(m.parts)).filter(Boolean);
  const base = { answer: texts.at(-1) ?? "", tokens, cost, replies: replies.length };
  const over = (facts.maxTokens !== undefined && tokens > facts.maxTokens) || (facts.maxCostUsd !== undefined && cost > facts.maxCostUsd);
  const verdict = (status: TurnStatus, error?: TurnOutcome["error"]): TurnOutcome =>
    over ? { status: "budget_exceeded", ...base } : { status, ...(error ? { error } : {}), ...base };

  if (facts.promptNotYetShown) return verdict("running");
  if (facts.pending) return verdict("blocked");
  if (!last) return facts.sessionError ? verdict("error", facts.sessionError) : verdict("running");
  const error = last.info.error;
  if (error) {
    const recorded = {
      name: error.name,
      ...(error.data?.message ? { message: error.data.message } : {}),
      ...(error.data?.statusCode !== undefined ? { statusCode: error.data.statusCode } : {}),
    };
    return verdict(error.name === ABORTED ? "interrupted" : "error", recorded);
  }
  if (last.info.time?.completed === undefined) return verdict("running");
  // A step that ended asking for tools, after which the session went idle: the loop was stopped
  // (a rejected permission or question); the stopped tool's error is what opencode recorded.
  if (last.info.finish === "tool-calls") {
    if (!facts.idle) return verdict("running");
    const stopped = last.parts.findLast((p) => p.type === "tool" && p.state?.status === "error");
    return verdict("interrupted", { name: "ToolStopped", ...(stopped?.state?.error ? { message: stopped.state.error } : {}) });
  }
  // Completed without a finish reason or an error: the step was stopped before the model answered
  // (an abort during a retry wait, docs/opencode-behaviour.md §6).
  if (!last.info.finish) return verdict("interrupted");
  return verdict("done");
}

const textOf = (parts: MessageEvidence["parts"]) =>
  parts
    .flatMap((p) => (p.type === "text" && !p.synthetic && p.text ? [p.text] : []))
    .join("\n")
    .trim();

/** A 2.x message as `GET /api/session/{id}/message` lists it (loosely typed). */
export interface RecordedV2Message {
  id: string;
  type: string;
  error?: { type: string; message?: string; status?: number };
  time?: { created?: number; completed?: number };
  finish?: string;
  content?: Array<{ type: string; text?: string }>;
  tokens?: { total?: number; input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } };
  cost?: number;
}

type Tokens = { total?: number; input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } };
/** A message's tokens as opencode counts them: its `total` (1.x), else every kind added up (2.x has no total). */
const tokensOf = (t: Tokens | undefined) =>
  t?.total ?? (t?.input ?? 0) + (t?.output ?? 0) + (t?.reasoning ?? 0) + (t?.cache?.read ?? 0) + (t?.cache?.write ?? 0);

/**
 * The outcome of a 2.x session's last turn. 2.x ends an execution explicitly: every step of it is
 * an assistant message; an interrupted one carries the error `aborted`.
 */
export function turnOutcomeV2(messages: RecordedV2Message[], facts: Omit<TurnFacts, "sessionError" | "promptNotYetShown">): TurnOutcome {
  const replies = messages.slice(messages.findLastIndex((m) => m.type === "user") + 1).filter((m) => m.type === "assistant");
  const last = replies.at(-1);
  const tokens = replies.reduce((n, m) => n + tokensOf(m.tokens), 0);
  const cost = replies.reduce((n, m) => n + (m.cost ?? 0), 0);
  const texts = replies
    .map((m) =>
      (m.content ?? [])
        .flatMap((c) => (c.type === "text" && c.text ? [c.text] : []))
        .join("\n")
        .trim(),
    )
    .filter(Boolean);
  const base = { answer: texts.at(-1) ?? "", tokens, cost, replies: replies.length };
  const over = (facts.maxTokens !== undefined && tokens > facts.maxTokens) || (facts.maxCostUsd !== undefined && cost > facts.maxCostUsd);
  const verdict = (status: TurnStatus, error?: TurnOutcome["error"]): TurnOutcome =>
    over ? { status: "budget_exceeded", ...base } : { status, ...(error ? { error } : {}), ...base };
  if (facts.pending) return verdict("blocked");
  if (!last || !facts.idle) return verdict("running");
  if (last.error) {
    const error = {
      name: last.error.type,
      ...(last.error.message ? { message: last.error.message } : {}),
      ...(last.error.status !== undefined ? { statusCode: last.error.status } : {}),
    };
    return verdict(last.error.type === "aborted" ? "interrupted" : "error", error);
  }
  return verdict(last.time?.completed !== undefined ? "done" : "running");
}

// ---- recorded tool calls ------------------------------------------------------------------------

/** Tools whose answer is a turn's status. */
export const TURN_TOOLS = new Set(["oc_delegate", "oc_wait", "oc_result", "oc_interrupt", "oc_send", "oc_ask"]);
/** Tools that answer from the MCP server's own state, not from opencode (their tests compare otherwise). */
export const LOCAL_TOOLS = new Set(["oc_api_ops", "oc_audit", "oc_instances"]);

export interface RecordedCallOutcome {
  /**
   * Whether a truthful answer is an error: opencode answered the call with one (HTTP 4xx/5xx).
   * Undefined when the call sent opencode nothing (refused before sending, or answered from the
   * MCP server's own state): opencode recorded nothing of it, so the test says what it expects.
   */
  isError: boolean | undefined;
  /** Turn tools: the outcome of each session the call was about, as opencode had told it by the call's end. */
  sessions: Record<string, TurnOutcome>;
  /** Turn tools about one session: that session's outcome. */
  outcome?: TurnOutcome;
  /** Requests the call made (method, path, status), in order. */
  requests: Array<{ method: string; path: string; status: number }>;
}

interface Timed {
  at: number;
  interaction?: Interaction;
  event?: { type: string; properties: Record<string, any> };
}

/** The recorded traffic in time order: each request as it was answered, each event as it arrived. */
function timeline(fixture: Fixture): Timed[] {
  const items: Timed[] = [];
  for (const i of fixture.interactions) {
    if (!i.events) items.push({ at: i.atMs, interaction: i });
    for (const e of i.events ?? []) {
      const data = e.data as { payload?: unknown } | string;
      if (typeof data !== "object" || data === null) continue;
      const event = (data.payload ?? data) as Timed["event"];
      if (event?.type) items.push({ at: i.atMs + e.atMs, event });
    }
  }
  return items.sort((a, b) => a.at - b.at);
}

/**
 * When each recorded call ran: from its start to its end (recordings without `endMs`: to the next
 * call's start; the last call: to the recorder's closing reads).
 */
export function callWindow(fixture: Fixture, index: number): { from: number; to: number } {
  const calls = fixture.calls ?? [];
  const call = calls[index];
  if (!call) throw new Error(`the recording "${fixture.scenario}" has no call ${index}`);
  const next = calls.slice(index + 1).find((c) => (c.atMs ?? 0) > (call.atMs ?? 0));
  return { from: call.atMs ?? 0, to: call.endMs ?? next?.atMs ?? closingReadsAt(fixture) };
}

/**
 * When the recorder's closing reads began (record-tools.ts: after the calls, per session a read of
 * its messages then of the session, then one status read): the end of the recording's last call.
 */
export function closingReadsAt(fixture: Fixture): number {
  const list = fixture.interactions;
  let at = list.length - 1;
  if (list[at]?.method !== "GET" || list[at]?.path !== "/session/status") return Infinity;
  const plain = (i: Interaction) => i.method === "GET" && Object.keys(i.query).every((k) => k === "directory");
  while (at >= 2) {
    const get = list[at - 1]!;
    const read = list[at - 2]!;
    const id = SESSION_PATH.exec(get.path)?.[1];
    if (!id || get.path !== `/session/${id}` || read.path !== `/session/${id}/message` || !plain(get) || !plain(read)) break;
    at -= 2;
  }
  return list[at]!.atMs;
}

const SESSION_PATH = /^\/session\/(ses_[0-9A-Za-z]+)(\/|$)/;

/**
 * What opencode had told the conductor about a session by time `to`: its messages (every read of
 * them and every message and part event, in order), idle or not, its pending requests.
 */
export function sessionAsTold(fixture: Fixture, sessionId: string, to: number): { messages: MessageEvidence[]; facts: TurnFacts } {
  const messages = new Map<string, MessageEvidence>();
  const pending = new Set<string>();
  let idle = false;
  let promptNotYetShown = false;
  let sessionError: TurnFacts["sessionError"];
  const upsert = (info: MessageEvidence["info"]) => {
    const known = messages.get(info.id);
    if (!known && info.role === "user") [promptNotYetShown, sessionError] = [false, undefined];
    messages.set(info.id, { info, parts: known?.parts ?? [] });
  };
  for (const item of timeline(fixture)) {
    if (item.at > to) break;
    const i = item.interaction;
    if (i && i.status < 400) {
      if (i.method === "GET" && i.path === `/session/${sessionId}/message` && Array.isArray(i.body)) {
        for (const m of i.body as MessageEvidence[]) {
          if (!messages.has(m.info.id) && m.info.role === "user") [promptNotYetShown, sessionError] = [false, undefined];
          messages.set(m.info.id, { info: m.info, parts: m.parts });
        }
      } else if (i.method === "POST" && (i.path === `/session/${sessionId}/prompt_async` || i.path === `/session/${sessionId}/command`)) {
        idle = false;
        promptNotYetShown = true;
      } else if (i.method === "GET" && i.path === "/session/status" && typeof i.body === "object" && i.body) {
        const status = (i.body as Record<string, { type: string }>)[sessionId];
        idle = status === undefined || status.type === "idle";
      } else if (i.method === "GET" && (i.path === "/permission" || i.path === "/question") && Array.isArray(i.body)) {
        const kind = i.path === "/permission" ? "per_" : "que_";
        for (const id of [...pending]) if (id.startsWith(kind)) pending.delete(id);
        for (const r of i.body as Array<{ id: string; sessionID: string }>) if (r.sessionID === sessionId) pending.add(r.id);
      }
    }
    const e = item.event;
    if (!e) continue;
    const p = e.properties ?? {};
    const about = p.sessionID ?? p.info?.sessionID ?? p.part?.sessionID;
    if (about !== sessionId) continue;
    switch (e.type) {
      case "message.updated":
        upsert(p.info);
        break;
      case "message.part.updated": {
        const m = messages.get(p.part.messageID) ?? { info: { id: p.part.messageID, role: "assistant" }, parts: [] };
        const at = m.parts.findIndex((q) => q.id === p.part.id);
        m.parts = at < 0 ? [...m.parts, p.part] : m.parts.map((q, n) => (n === at ? p.part : q));
        messages.set(m.info.id, m);
        break;
      }
      case "message.part.delta": {
        const m = messages.get(p.messageID);
        const part = m?.parts.find((q) => q.id === p.partID);
        if (part && p.field === "text") part.text = `${part.text ?? ""}${p.delta}`;
        break;
      }
      case "session.status":
        idle = p.status?.type === "idle";
        break;
      case "session.idle":
        idle = true;
        break;
      case "session.error":
        // The first one says why (a second may carry a stack trace); a prompt refused this way
        // (unknown agent or model) starts no turn on record.
        if (p.error && !sessionError) sessionError = { name: p.error.name, ...(p.error.data?.message ? { message: p.error.data.message } : {}) };
        promptNotYetShown = false;
        break;
      case "permission.asked":
      case "question.asked":
        pending.add(p.id);
        break;
      case "permission.replied":
      case "question.replied":
      case "question.rejected":
        pending.delete(p.requestID ?? p.permissionID);
        break;
    }
  }
  const ordered = [...messages.values()].sort((a, b) => (a.info.time?.created ?? 0) - (b.info.time?.created ?? 0) || a.info.id.localeCompare(b.info.id));
  return { messages: ordered, facts: { idle, pending: pending.size > 0, promptNotYetShown, ...(sessionError ? { sessionError } : {}) } };
}

/**
 * What a truthful answer to recorded call `index` says, from the traffic of that call alone (and
 * what opencode had told before it): an error when opencode answered the call with one (HTTP 4xx
 * or 5xx); for a turn tool, the outcome of each session it was about.
 */
export function recordedCallOutcome(fixture: Fixture, index: number): RecordedCallOutcome {
  const call = fixture.calls![index]!;
  const { from, to } = callWindow(fixture, index);
  const own = fixture.interactions.filter((i) => i.atMs >= from && i.atMs < to);
  const requests = own.map((i) => ({ method: i.method, path: i.path, status: i.status }));
  const isError = LOCAL_TOOLS.has(call.tool) || own.length === 0 ? undefined : own.some((i) => i.status >= 400);
  const sessions: Record<string, TurnOutcome> = {};
  if (TURN_TOOLS.has(call.tool) && isError === false) {
    const named = typeof call.arguments.session_id === "string" ? [call.arguments.session_id] : [];
    // A new session: the one the call created (oc_delegate, oc_ask); a replayed request id: the session it read.
    const created = own.flatMap((i) => (i.method === "POST" && i.path === "/session" && i.status === 200 ? [(i.body as { id: string }).id] : []));
    const touched = own.flatMap((i) => SESSION_PATH.exec(i.path)?.[1] ?? []);
    const ids = [...new Set(named.length ? named : created.length ? created : touched)];
    const caps = {
      ...(typeof call.arguments.max_tokens === "number" ? { maxTokens: call.arguments.max_tokens } : {}),
      ...(typeof call.arguments.max_cost_usd === "number" ? { maxCostUsd: call.arguments.max_cost_usd } : {}),
    };
    for (const id of ids) {
      const told = sessionAsTold(fixture, id, to);
      sessions[id] = turnOutcome(told.messages, { ...told.facts, ...caps });
    }
  }
  const only = Object.values(sessions);
  return { isError, sessions, ...(only.length === 1 ? { outcome: only[0] } : {}), requests };
}
