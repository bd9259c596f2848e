// The engine boundary: everything the core needs from opencode, as one interface with one
// implementation per API generation: v1/ for opencode 1.x (the v1 API: /session, prompt_async,
// /global/event), v2/ for opencode 2.x (the v2 API under /api, routes resolved per server by
// src/client/v2/routes.ts). detect.ts picks one by asking the server what it is.
//
// The data crossing the boundary keeps the shapes the core was written for (1.x messages and parts,
// the 1.x provider catalogue, PendingRequest): the v1 engine passes opencode's own objects on, the
// v2 engine maps 2.x objects into them (v2-messages.ts, v2-requests.ts, v2-catalog.ts), so the
// summaries, budgets, checks and tools do not care which opencode answered. What differs in
// behaviour is stated by `capabilities` and by UnsupportedOnEngineError, never by a version test
// in the core.
import type { EventsOptions } from "../../client/event-stream.js";
import type { HubEvent } from "./hub-events.js";
import type { ModelRef } from "../catalog/model-resolve.js";
import type { PermissionRule } from "../policy/permissions.js";
import type { AnswerPermission, AnswerQuestion, PendingRequest } from "../model/pending-request.js";
import type { SessionActivity, TurnEvent, TurnMachineOptions } from "../model/turn-event.js";
import type { MessageEvidence } from "../model/turn-outcome.js";
import type { Message, MessageInfo, Part } from "../model/message.js";
import type { FileDiff } from "../model/file-change.js";
import type { ProviderList } from "../model/catalog.js";
import type { Session, SessionRunState, Todo } from "../model/session.js";
import { UsageError } from "../errors.js";
import type { CatalogKind, CatalogRows } from "./catalog-rows.js";

export type EngineKind = "v1" | "v2";

export type Delivery = "queue" | "steer";

export interface AttachedFile {
  /** Absolute path. */
  path: string;
  mime: string;
  name: string;
}

export interface PromptInput {
  text: string;
  model?: ModelRef;
  agent?: string;
  /** Sub-agents to mention. */
  agents?: string[];
  files?: AttachedFile[];
  /** A slash command (without the slash); `text` becomes its arguments. */
  command?: string;
  /** Into a running turn: `steer` (2.x: seen by the next model call) or `queue` (after it). */
  delivery?: Delivery;
  /**
   * Told the id opencode gave the prompt when its answer names one (2.x: the admitted input's, its
   * user message's once promoted); 1.x answers 204 with nothing, so it is never called there.
   */
  onAdmitted?: (inputId: string) => void;
}

/** What a session's events mean for whoever follows its turn (engine-neutral). */
export type WatchSignal =
  /** Evidence for the turn machine. */
  | { kind: "turn"; event: TurnEvent }
  /** The session started working (shown once as progress). */
  | { kind: "busy" }
  | { kind: "retry"; attempt: number; message: string; next: number }
  /** A model step finished: a run of retries is over. */
  | { kind: "step-finished" }
  | { kind: "tool"; callId: string; tool: string; status: "running" | "completed" | "error"; title?: string; file?: string }
  | { kind: "request"; request: PendingRequest }
  | { kind: "request-answered"; id: string }
  /** A sub-agent session of a session we follow. */
  | { kind: "child"; parentId: string; sessionId: string }
  /** 1.x only: the event stream carries whole messages, so a turn we prompted needs no re-read. */
  | { kind: "seen-message"; info: MessageInfo }
  | { kind: "seen-part"; part: Part }
  | { kind: "seen-removed"; messageId: string; partId?: string };

/** Translates the hub's events for one session (stateful: it keeps what later events complete). */
export interface SessionTranslator {
  translate(event: HubEvent, followed: ReadonlySet<string>): WatchSignal[];
  /**
   * The session's messages as the events told them, when the translator can vouch they hold the
   * whole turn that just ended (2.x: engine/v2/v2-seen-turn.ts); undefined: read the session.
   */
  turnMessages?(o?: { partial?: boolean }): Message[] | undefined;
}

/** A model step's usage, or a sub-agent session, as budgets count them. */
export type UsageSignal =
  | { kind: "usage"; sessionId: string; messageId: string; parentId?: string; tokens: number; cost: number }
  | { kind: "child"; parentId: string; sessionId: string };

/** Translates the hub's events into usage, for every session (budgets follow several). */
export interface UsageTranslator {
  translate(event: HubEvent): UsageSignal[];
}

/** What the server holds about a session's last turn right now. */
export interface TurnSnapshot {
  activity: SessionActivity;
  retry?: { attempt: number; message: string; next: number };
  /** The last turn's messages as the machine reads them, in the server's list order. */
  records: MessageEvidence[];
  messages: Message[];
}

export interface EngineCapabilities {
  /** A prompt can join the running turn (2.x `delivery: steer`); without it, steering interrupts first. */
  nativeSteer: boolean;
  /** Per-session permission rules can be set when a session is created. */
  sessionRules: boolean;
  /** A failed attempt's messages can be deleted before a fallback resends the task. */
  deleteMessages: boolean;
  /** Compaction needs the model that writes the summary (1.x); 2.x uses the session's. */
  compactNeedsModel: boolean;
  /**
   * A turn's diff tells more than its messages (line counts, added/deleted; 1.x `session.diff`), so
   * a summary of a turn that changed files reads it. 2.x's is the messages' own file list.
   */
  turnDiffLines: boolean;
}

/** A sent prompt opencode holds behind another turn (Engine.waitingPrompt). */
export interface WaitingPrompt {
  /** Its id on the server's waiting list, when it has one (2.x). */
  inputId?: string;
  /** The server can take it back before it runs (2.0.26's inbox cancel). */
  withdrawable: boolean;
  /** What happens to it if the running turn is interrupted instead, in this server's words (docs/opencode-*behaviour.md). */
  onInterrupt: string;
}

export interface EngineInfo {
  kind: EngineKind;
  /** What the server says it is, e.g. `1.18.33`, `2.0.0-src.b622626`. */
  version: string;
  capabilities: EngineCapabilities;
}

/** How the hub reads the events: until `signal` aborts, dropping unparsed what `wanted` declines. */
export type EngineEventsOptions = Pick<EventsOptions, "wanted" | "onData"> & { signal: AbortSignal };

/**
 * A session to create. `model` and `agent` are what its first prompt will ask for: an engine whose
 * server takes them at creation sets them there (2.x), so the prompt has nothing to switch.
 */
export interface NewSession {
  title: string;
  rules?: PermissionRule[];
  model?: ModelRef;
  agent?: string;
}

export interface Engine {
  readonly url: string;
  /** Project directory new sessions are created in (undefined: the server's). */
  readonly directory: string | undefined;
  /** The same server, bound to another project directory. */
  withDirectory(directory: string | undefined): Engine;
  info(): Promise<EngineInfo>;
  /** What this engine can do (no request on 1.x; from the server's spec on 2.x). */
  capabilities(): Promise<EngineCapabilities>;
  health(timeoutMs?: number): Promise<{ healthy: boolean; version: string }>;
  /**
   * The server's own OpenAPI document when the engine holds it (2.x: read at connect time for the
   * route adapter); undefined on 1.x, whose spec server/spec.ts reads and caches itself.
   */
  openApi(): Promise<{ version: string; sha256: string; doc: unknown } | undefined>;
  /** The server's events, normalized into hub events, reconnecting when the stream drops; `wanted` as in EventsOptions. */
  events(options: EngineEventsOptions): AsyncGenerator<HubEvent>;
  /** How the turn machine reads this engine's evidence, and the translator for one session. */
  watchKit(sessionId: string): Promise<{ machine: TurnMachineOptions; translator: SessionTranslator }>;
  usageTranslator(): Promise<UsageTranslator>;

  // Sessions
  createSession(o: NewSession): Promise<Session>;
  getSession(id: string): Promise<Session>;
  listSessions(o: { limit: number; search?: string }): Promise<Session[]>;
  childSessions(id: string): Promise<Session[]>;
  setRules(id: string, rules: PermissionRule[]): Promise<void>;
  rename(id: string, title: string): Promise<Session>;
  archive(id: string): Promise<Session>;
  remove(id: string): Promise<boolean>;
  fork(id: string, o: { messageId?: string }): Promise<Session>;
  revert(id: string, o: { messageId: string; partId?: string }): Promise<Session>;
  unrevert(id: string): Promise<Session>;
  compact(id: string, o: { model?: ModelRef; timeoutMs: number }): Promise<boolean>;
  shell(id: string, o: { command: string; agent: string; model?: ModelRef; timeoutMs: number }): Promise<Message>;
  todo(id: string): Promise<Todo[]>;

  // Turns
  /** Refuses, before any session is made, a prompt this opencode would not carry out as asked. */
  checkPrompt(input: PromptInput): Promise<void>;
  /** Starts a turn (or joins the running one, see `delivery`); a late failure (1.x command route) goes to `onLateFailure`. */
  prompt(id: string, input: PromptInput, onLateFailure: (error: unknown) => void): Promise<void>;
  /**
   * The prompt sent after user message `after` (or with input id `inputId`) while it still waits
   * behind another turn, as opencode records it; undefined once a turn of its own runs or nothing
   * runs. `withdrawable`: this server can take it back (withdrawPrompt).
   */
  waitingPrompt(id: string, sent: { after?: string; inputId?: string }): Promise<WaitingPrompt | undefined>;
  /** Takes a waiting prompt back before it runs and re-reads that it is gone; refused where the server cannot. */
  withdrawPrompt(id: string, inputId: string): Promise<void>;
  abort(id: string): Promise<void>;
  runState(id: string): Promise<SessionRunState>;
  snapshot(id: string): Promise<TurnSnapshot>;
  lastTurn(id: string): Promise<Message[]>;
  newestMessageId(id: string): Promise<string | undefined>;
  messages(id: string): Promise<Message[]>;
  /** Newest `limit` messages (oldest first), or those before an earlier page's cursor. */
  messagesPage(id: string, o: { limit: number; before?: string }): Promise<{ messages: Message[]; nextBefore?: string }>;
  deleteMessage(id: string, messageId: string): Promise<boolean>;
  /** Files the turn of user message `messageId` changed (git projects). */
  turnDiff(id: string, messageId: string): Promise<FileDiff[]>;

  // Permission requests and questions
  listPending(sessionIds?: Iterable<string>): Promise<PendingRequest[]>;
  answerPermission(a: AnswerPermission): Promise<void>;
  answerQuestion(a: AnswerQuestion): Promise<void>;

  // Models
  providerCatalog(): Promise<ProviderList>;
  /** The model opencode's own configuration names, if any. */
  configuredModel(): Promise<string | undefined>;
  /** Compact rows of one of the server's catalogs (agents, skills, …); `config` is redacted. */
  catalog<K extends CatalogKind>(kind: K): Promise<CatalogRows[K]>;
}

/** The connected opencode cannot do this at all (the other major can, or neither). */
export class UnsupportedOnEngineError extends UsageError {
  override name = "UnsupportedOnEngineError";
  constructor(what: string, version: string, instead?: string) {
    super(`opencode ${version} cannot ${what}${instead ? `: ${instead}` : "."}`);
  }
}
