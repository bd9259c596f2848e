// Sessions as a caller sees them: compact listings and one small function per action (info,
// messages, diff, fork, compact, rename, delete, abort, revert, shell, export, todo). v1 engine only
// (docs/opencode-behaviour.md §3). Session-scoped routes follow the session's own directory; `session.status` is per
// directory instance, so status reads go to the session's directory (docs/opencode-behaviour.md §9).
import { ConnectionError, errorForResponse, safeUrl } from "../client/errors.js";
import type { Schemas } from "../client/types.js";
import type { CoreContext } from "./context.js";
import { modelRefusal, resolveModelRef, type DirectoryOption } from "./discovery.js";
import { quoted, UsageError } from "./errors.js";
import { formatModel, type ModelRef } from "./model-resolve.js";
import { errorOf, type SessionMessage, type TurnError } from "./summary.js";
import { TurnWatch } from "./turn-watch.js";

type Session = Schemas["Session"];

export interface SessionRow {
  id: string;
  title: string;
  directory: string;
  parentId?: string;
  /** ISO 8601 times. */
  created: string;
  updated: string;
  archived?: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function sessionRow(s: Session): SessionRow {
  return {
    id: s.id,
    title: s.title,
    directory: s.directory,
    ...(s.parentID ? { parentId: s.parentID } : {}),
    created: iso(s.time.created),
    updated: iso(s.time.updated),
    ...(s.time.archived ? { archived: iso(s.time.archived) } : {}),
  };
}

// The spec pins id prefixes; a wrong one makes opencode answer 500, not 400 (docs/opencode-behaviour.md §3).
function checkId(id: string | undefined, prefix: "ses" | "msg" | "prt", what: string): string {
  if (typeof id !== "string" || !id.startsWith(prefix)) {
    throw new UsageError(`${what} must be an opencode id starting with "${prefix}_", got ${quoted(id)}.${prefix === "ses" ? " List sessions with oc_sessions." : ""}`);
  }
  return id;
}

/** Call options: the session's directory when it is not the client's, and a longer timeout for synchronous calls. */
const opts = (directory: string | undefined, timeoutMs?: number) => ({ directory, ...(timeoutMs ? { timeoutMs } : {}) });

// ---------------------------------------------------------------------------------------------
// Listing

export interface ListSessionsOptions extends DirectoryOption {
  /** Case-insensitive text in the title. */
  search?: string;
  /** Only the child (sub-agent) sessions of this session. */
  parentId?: string;
  /** Default 50. */
  limit?: number;
}

/** Sessions, most recently updated first. */
export async function listSessions(ctx: CoreContext, options: ListSessionsOptions = {}): Promise<SessionRow[]> {
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`limit must be a positive integer, got ${limit}.`);
  const search = options.search?.trim() || undefined;
  let sessions: Session[];
  if (options.parentId !== undefined) {
    const parentID = checkId(options.parentId, "ses", "parentId");
    const needle = search?.toLowerCase();
    sessions = (await ctx.client.call("session.children", { path: { sessionID: parentID } }, opts(options.directory))).filter(
      (s) => !needle || s.title.toLowerCase().includes(needle),
    );
  } else {
    sessions = await ctx.client.call("session.list", { query: { limit, ...(search ? { search } : {}) } }, opts(options.directory));
  }
  return sessions
    .sort((a, b) => b.time.updated - a.time.updated)
    .slice(0, limit)
    .map(sessionRow);
}

// ---------------------------------------------------------------------------------------------
// Info

export type RunState = "idle" | "busy" | "retry";

export interface SessionDetails extends SessionRow {
  status: RunState;
  /** While opencode waits to retry a failed model call. */
  retry?: { attempt: number; message: string; nextAt: string };
  model?: string;
  agent?: string;
  cost?: number;
  tokens?: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number };
  revert?: { messageId: string; partId?: string };
  shareUrl?: string;
}

export async function sessionInfo(ctx: CoreContext, id: string, options: DirectoryOption = {}): Promise<SessionDetails> {
  const s = await ctx.client.call("session.get", { path: { sessionID: checkId(id, "ses", "sessionId") } }, opts(options.directory));
  const status = await runState(ctx, s);
  return {
    ...sessionRow(s),
    status: status.type,
    ...(status.type === "retry" ? { retry: { attempt: status.attempt, message: status.message, nextAt: iso(status.next) } } : {}),
    ...(s.model ? { model: formatModel({ providerID: s.model.providerID, modelID: s.model.id, variant: s.model.variant === "default" ? undefined : s.model.variant }) } : {}),
    ...(s.agent ? { agent: s.agent } : {}),
    ...(s.cost !== undefined ? { cost: s.cost } : {}),
    ...(s.tokens
      ? { tokens: { input: s.tokens.input, output: s.tokens.output, reasoning: s.tokens.reasoning, cacheRead: s.tokens.cache.read, cacheWrite: s.tokens.cache.write } }
      : {}),
    ...(s.revert ? { revert: { messageId: s.revert.messageID, ...(s.revert.partID ? { partId: s.revert.partID } : {}) } } : {}),
    ...(s.share ? { shareUrl: s.share.url } : {}),
  };
}

/** `session.status` lists only non-idle sessions of one directory instance: absent means idle. */
async function runState(ctx: CoreContext, s: Session): Promise<Schemas["SessionStatus"]> {
  const statuses = await ctx.client.call("session.status", {}, { directory: s.directory });
  return statuses[s.id] ?? { type: "idle" };
}

// ---------------------------------------------------------------------------------------------
// Messages

export interface CompactMessage {
  id: string;
  role: "user" | "assistant";
  time: string;
  model?: string;
  text?: string;
  /** Tool names, in call order. */
  tools?: string[];
  error?: TurnError;
}

export interface MessagesPage {
  /** Oldest first. */
  messages: CompactMessage[];
  /** Pass as `before` for the page of older messages; absent on the first message. */
  nextBefore?: string;
}

const MAX_TEXT = 4_000;
const PAGE_TIMEOUT_MS = 30_000;

/** The newest `limit` (default 20) messages, or those before the `before` cursor of an earlier page. */
export async function sessionMessages(ctx: CoreContext, id: string, options: DirectoryOption & { limit?: number; before?: string } = {}): Promise<MessagesPage> {
  const limit = options.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`limit must be a positive integer, got ${limit}.`);
  const page = await messagesPage(ctx, checkId(id, "ses", "sessionId"), { ...options, limit });
  return { messages: page.messages.map(compactMessage), ...(page.nextBefore ? { nextBefore: page.nextBefore } : {}) };
}

/**
 * One page of `session.messages`. opencode puts the cursor for older messages only in the
 * `X-Next-Cursor` response header (`before` takes that opaque cursor, not a message id), and
 * `call()` returns bodies only, so this one read goes through the typed raw client.
 */
async function messagesPage(
  ctx: CoreContext,
  sessionID: string,
  options: DirectoryOption & { limit: number; before?: string },
): Promise<{ messages: SessionMessage[]; nextBefore?: string }> {
  const directory = options.directory ?? ctx.client.directory;
  const query = { limit: options.limit, ...(options.before ? { before: options.before } : {}), ...(directory ? { directory } : {}) };
  const context = { operationId: "session.messages", method: "GET", url: safeUrl(ctx.client.url) };
  let result;
  try {
    result = await ctx.client.raw.GET("/session/{sessionID}/message", { params: { path: { sessionID }, query }, signal: AbortSignal.timeout(PAGE_TIMEOUT_MS) });
  } catch (error) {
    const timeout = (error as Error | undefined)?.name === "TimeoutError";
    throw new ConnectionError(
      timeout
        ? `opencode at ${context.url} did not answer session.messages within ${PAGE_TIMEOUT_MS} ms. Check that the server is healthy.`
        : `Cannot reach opencode at ${context.url} (${(error as Error | undefined)?.message ?? String(error)}). Is it running?`,
      timeout ? "timeout" : "unreachable",
      context,
      error,
    );
  }
  if (!result.response.ok || !result.data) throw errorForResponse(result.response.status, result.error, context);
  const next = result.response.headers.get("x-next-cursor");
  return { messages: result.data, ...(next ? { nextBefore: next } : {}) };
}

function compactMessage(m: SessionMessage): CompactMessage {
  const info = m.info;
  const text = m.parts
    .flatMap((p) => (p.type === "text" && !p.synthetic && !p.ignored ? [p.text] : []))
    .join("\n")
    .trim();
  const tools = m.parts.flatMap((p) => (p.type === "tool" ? [p.tool] : []));
  const model = info.role === "user" ? formatModel(info.model) : formatModel({ providerID: info.providerID, modelID: info.modelID });
  const error = info.role === "assistant" ? errorOf(info.error) : undefined;
  return {
    id: info.id,
    role: info.role,
    time: iso(info.time.created),
    model,
    ...(text ? { text: text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}… (${text.length - MAX_TEXT} more characters)` : text } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(error ? { error } : {}),
  };
}

/** The last user message that started a turn (compaction requests are user messages too: skipped). */
async function lastUserMessage(ctx: CoreContext, sessionID: string, directory: string | undefined): Promise<SessionMessage | undefined> {
  let before: string | undefined;
  do {
    const page = await messagesPage(ctx, sessionID, { limit: 20, before, directory });
    const hit = page.messages.findLast((m) => m.info.role === "user" && !m.parts.some((p) => p.type === "compaction"));
    if (hit) return hit;
    before = page.nextBefore;
  } while (before);
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Diff

export interface SessionDiff {
  sessionId: string;
  /** The user message whose turn this is; absent when the session has no user message. */
  messageId?: string;
  files: Array<{ file: string; status?: "added" | "deleted" | "modified"; additions: number; deletions: number; patch?: string }>;
}

/**
 * Files one turn changed (git projects only). Without `messageId`, the last turn: the plain
 * session diff is always [] in 1.18.33, only `?messageID=` works (docs/opencode-behaviour.md §7).
 */
export async function sessionDiff(ctx: CoreContext, id: string, options: DirectoryOption & { messageId?: string } = {}): Promise<SessionDiff> {
  const sessionID = checkId(id, "ses", "sessionId");
  // Listening first: the per-turn diff is written a moment after the turn goes idle (docs/opencode-behaviour.md §1, "after idle").
  const summarized = await summaryOf(ctx, sessionID);
  try {
    const messageID = options.messageId !== undefined ? checkId(options.messageId, "msg", "messageId") : (await lastUserMessage(ctx, sessionID, options.directory))?.info.id;
    if (!messageID) return { sessionId: sessionID, files: [] };
    const read = () => ctx.client.call("session.diff", { path: { sessionID }, query: { messageID } }, opts(options.directory));
    let diff = await read();
    if (diff.length === 0 && (await summaryPending(ctx, sessionID, messageID, options.directory)) && (await summarized.until(messageID))) diff = await read();
    return diffOf(sessionID, messageID, diff);
  } finally {
    summarized.stop();
  }
}

/** How long a diff read waits for opencode to write the turn's summary after the turn ended. */
const SUMMARY_WAIT_MS = 5_000;

/** Resolves true when a user message of the session gets its `summary` (the per-turn diff), false after SUMMARY_WAIT_MS. */
async function summaryOf(ctx: CoreContext, sessionID: string): Promise<{ until(messageID: string): Promise<boolean>; stop(): void }> {
  const done = new Set<string>();
  const waiters = new Map<string, () => void>();
  const unsubscribe = await ctx.hub
    .subscribe((event) => {
      if (event.type !== "message.updated" || event.properties.sessionID !== sessionID) return;
      const info = event.properties.info;
      if (info.role !== "user" || !info.summary) return;
      done.add(info.id);
      waiters.get(info.id)?.();
    })
    .catch(() => undefined); // no events: the diff is read once, as before
  return {
    async until(messageID) {
      if (done.has(messageID)) return true;
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), SUMMARY_WAIT_MS);
        waiters.set(messageID, () => (clearTimeout(timer), resolve(true)));
      });
    },
    stop() {
      unsubscribe?.();
    },
  };
}

/** The turn of `messageID` edited files, and opencode has not yet written its summary. */
async function summaryPending(ctx: CoreContext, sessionID: string, messageID: string, directory: string | undefined): Promise<boolean> {
  const messages = await ctx.client.call("session.messages", { path: { sessionID } }, opts(directory));
  const user = messages.find((m) => m.info.id === messageID);
  if (!user || user.info.role !== "user" || user.info.summary) return false;
  const EDITS = new Set(["write", "edit", "patch", "apply_patch", "multiedit"]);
  return messages.some((m) => m.info.role === "assistant" && m.info.parentID === messageID && m.parts.some((p) => p.type === "tool" && EDITS.has(p.tool) && p.state.status === "completed"));
}

function diffOf(sessionID: string, messageID: string, diff: Schemas["SnapshotFileDiff"][]): SessionDiff {
  return {
    sessionId: sessionID,
    messageId: messageID,
    files: diff.flatMap((d) => (d.file ? [{ file: d.file, ...(d.status ? { status: d.status } : {}), additions: d.additions, deletions: d.deletions, ...(d.patch ? { patch: d.patch } : {}) }] : [])),
  };
}

// ---------------------------------------------------------------------------------------------
// Actions

/** A new session with the history strictly before `messageId` (all of it without one); its parentId stays empty. */
export async function forkSession(ctx: CoreContext, id: string, options: DirectoryOption & { messageId?: string } = {}): Promise<SessionRow> {
  const body = options.messageId !== undefined ? { messageID: checkId(options.messageId, "msg", "messageId") } : {};
  return sessionRow(await ctx.client.call("session.fork", { path: { sessionID: checkId(id, "ses", "sessionId") }, body }, opts(options.directory)));
}

export async function renameSession(ctx: CoreContext, id: string, title: string, options: DirectoryOption = {}): Promise<SessionRow> {
  const trimmed = title.trim();
  if (!trimmed) throw new UsageError("The new title is empty. Give the session a non-empty title.");
  return sessionRow(await ctx.client.call("session.update", { path: { sessionID: checkId(id, "ses", "sessionId") }, body: { title: trimmed } }, opts(options.directory)));
}

const ABORT_SETTLE_MS = 10_000;

/** Stops the session's turn (a no-op when idle); says whether one was running. */
export async function abortSession(ctx: CoreContext, id: string, options: DirectoryOption = {}): Promise<{ sessionId: string; wasRunning: boolean }> {
  const s = await ctx.client.call("session.get", { path: { sessionID: checkId(id, "ses", "sessionId") } }, opts(options.directory));
  const status = await runState(ctx, s);
  // Always abort: a prompt sent a moment ago is not busy yet (docs/opencode-behaviour.md §2) but is about to be.
  await ctx.client.call("session.abort", { path: { sessionID: s.id } }, opts(s.directory));
  return { sessionId: s.id, wasRunning: status.type !== "idle" };
}

/** Deletes a session, aborting its turn first: deleting a busy session leaves its loop running (docs/opencode-behaviour.md §6). */
export async function deleteSession(ctx: CoreContext, id: string, options: DirectoryOption = {}): Promise<{ sessionId: string; deleted: boolean; aborted: boolean }> {
  const s = await ctx.client.call("session.get", { path: { sessionID: checkId(id, "ses", "sessionId") } }, opts(options.directory));
  const status = await runState(ctx, s);
  const aborted = status.type !== "idle";
  if (aborted) {
    // Subscribe before aborting so the idle that ends the loop cannot be missed.
    const watch = await TurnWatch.start(ctx.client.withDirectory(s.directory), ctx.hub, s.id);
    try {
      await ctx.client.call("session.abort", { path: { sessionID: s.id } }, opts(s.directory));
      await watch.wait({ timeoutMs: ABORT_SETTLE_MS, returnOnBlocked: false });
    } finally {
      watch.close();
    }
  }
  const deleted = await ctx.client.call("session.delete", { path: { sessionID: s.id } }, opts(s.directory));
  return { sessionId: s.id, deleted, aborted };
}

export interface RevertState extends SessionRow {
  revert?: { messageId: string; partId?: string; diff?: string };
}

function revertState(s: Session): RevertState {
  const r = s.revert;
  return { ...sessionRow(s), ...(r ? { revert: { messageId: r.messageID, ...(r.partID ? { partId: r.partID } : {}), ...(r.diff ? { diff: r.diff } : {}) } } : {}) };
}

/**
 * Undoes `messageId` and everything after it: in git projects files go back to before it. Messages
 * stay listed until the next prompt, which drops them; `unrevertSession` undoes this before that.
 */
export async function revertSession(ctx: CoreContext, id: string, options: DirectoryOption & { messageId: string; partId?: string }): Promise<RevertState> {
  const body = { messageID: checkId(options.messageId, "msg", "messageId"), ...(options.partId !== undefined ? { partID: checkId(options.partId, "prt", "partId") } : {}) };
  return revertState(await ctx.client.call("session.revert", { path: { sessionID: checkId(id, "ses", "sessionId") }, body }, opts(options.directory)));
}

export async function unrevertSession(ctx: CoreContext, id: string, options: DirectoryOption = {}): Promise<RevertState> {
  return revertState(await ctx.client.call("session.unrevert", { path: { sessionID: checkId(id, "ses", "sessionId") } }, opts(options.directory)));
}

const SYNC_TIMEOUT_MS = 300_000;

export interface CompactOptions extends DirectoryOption {
  /** Model that writes the summary; default: the model of the session's last user message. */
  model?: string;
  /** The call returns when the summary is written; default 5 min. */
  timeoutMs?: number;
}

/** Replaces the session's history by a summary written by a model (`session.summarize`, synchronous). */
export async function compactSession(ctx: CoreContext, id: string, options: CompactOptions = {}): Promise<{ sessionId: string; model: string; compacted: boolean }> {
  const sessionID = checkId(id, "ses", "sessionId");
  const ref = options.model !== undefined ? await resolveModelRef(ctx, options.model, options) : await sessionModel(ctx, sessionID, options.directory);
  const compacted = await ctx.client.call(
    "session.summarize",
    { path: { sessionID }, body: { providerID: ref.providerID, modelID: ref.modelID } },
    opts(options.directory, options.timeoutMs ?? SYNC_TIMEOUT_MS),
  );
  return { sessionId: sessionID, model: formatModel({ providerID: ref.providerID, modelID: ref.modelID }), compacted };
}

/** The model the session last ran with, if this conductor may use it. */
async function sessionModel(ctx: CoreContext, sessionID: string, directory: string | undefined): Promise<ModelRef> {
  const user = await lastUserMessage(ctx, sessionID, directory);
  let ref: ModelRef | undefined = user?.info.role === "user" ? { providerID: user.info.model.providerID, modelID: user.info.model.modelID } : undefined;
  if (!ref) {
    const s = await ctx.client.call("session.get", { path: { sessionID } }, opts(directory));
    if (s.model) ref = { providerID: s.model.providerID, modelID: s.model.id };
  }
  if (!ref) throw new UsageError(`Session ${sessionID} has no messages, so it has no model yet. Pass \`model\` (list models with oc_models).`);
  const refusal = modelRefusal(formatModel(ref), ctx.settings);
  if (refusal) throw new UsageError(`${refusal} Pass another \`model\` to compact with.`);
  return ref;
}

export interface ShellOptions extends DirectoryOption {
  command: string;
  /** Default "build". */
  agent?: string;
  model?: string;
  /** The call returns when the command ends; default 5 min. */
  timeoutMs?: number;
}

/** Runs a shell command inside the session (recorded in its history) and returns what it printed. */
export async function shellInSession(ctx: CoreContext, id: string, options: ShellOptions): Promise<{ sessionId: string; messageId: string; output: string; error?: string }> {
  const sessionID = checkId(id, "ses", "sessionId");
  if (!options.command?.trim()) throw new UsageError("The shell command is empty. Give a command such as `ls -la`.");
  const ref = options.model !== undefined ? await resolveModelRef(ctx, options.model, options) : undefined;
  const body = { command: options.command, agent: options.agent ?? "build", ...(ref ? { model: { providerID: ref.providerID, modelID: ref.modelID } } : {}) };
  const result = await ctx.client.call("session.shell", { path: { sessionID }, body }, opts(options.directory, options.timeoutMs ?? SYNC_TIMEOUT_MS));
  const outputs: string[] = [];
  const errors: string[] = [];
  for (const part of result.parts) {
    if (part.type !== "tool") continue;
    if (part.state.status === "completed") outputs.push(part.state.output);
    else if (part.state.status === "error") errors.push(part.state.error);
  }
  const error = errors.join("\n") || (result.info.role === "assistant" ? errorOf(result.info.error)?.message : undefined);
  return { sessionId: sessionID, messageId: result.info.id, output: outputs.join("\n").trimEnd(), ...(error ? { error } : {}) };
}

/** The session record and every message with all parts, as opencode stores them. */
export async function exportSession(ctx: CoreContext, id: string, options: DirectoryOption = {}): Promise<{ session: Session; messages: SessionMessage[] }> {
  const sessionID = checkId(id, "ses", "sessionId");
  const [session, messages] = await Promise.all([
    ctx.client.call("session.get", { path: { sessionID } }, opts(options.directory)),
    ctx.client.call("session.messages", { path: { sessionID } }, opts(options.directory)),
  ]);
  return { session, messages };
}

export async function sessionTodo(ctx: CoreContext, id: string, options: DirectoryOption = {}): Promise<Schemas["Todo"][]> {
  return ctx.client.call("session.todo", { path: { sessionID: checkId(id, "ses", "sessionId") } }, opts(options.directory));
}
