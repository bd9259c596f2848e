// One small function per session action: fork, rename, abort, delete, revert, compact, shell,
// export, todo. Session-scoped routes follow the session's own directory.
import type { Session, Todo } from "../model/session.js";
import type { CoreContext } from "../context.js";
import { modelRefusal, resolveModelRef } from "../catalog/models.js";
import { type DirectoryOption } from "../context.js";
import { UsageError } from "../errors.js";
import { formatModel, type ModelRef } from "../catalog/model-resolve.js";
import { errorOf } from "../turns/summary.js";
import type { Message } from "../model/message.js";
import { TurnWatch } from "../turns/watch.js";
import { validId } from "../inputs/ids.js";
import { sessionScope } from "./scope.js";
import { engineIn, sessionRow, type SessionRow } from "./rows.js";
import { runState } from "./info.js";
import { lastUserMessage } from "./messages.js";

/** A new session with the history strictly before `messageId` (all of it without one); its parentId stays empty. */
export async function forkSession(ctx: CoreContext, id: string, options: DirectoryOption & { messageId?: string } = {}): Promise<SessionRow> {
  const messageId = options.messageId !== undefined ? validId(options.messageId, "msg", "messageId") : undefined;
  return sessionRow(await engineIn(ctx, options.directory).fork(validId(id, "ses", "sessionId"), messageId ? { messageId } : {}));
}

export async function renameSession(ctx: CoreContext, id: string, title: string, options: DirectoryOption = {}): Promise<SessionRow> {
  const trimmed = title.trim();
  if (!trimmed) throw new UsageError("The new title is empty. Give the session a non-empty title.");
  return sessionRow(await engineIn(ctx, options.directory).rename(validId(id, "ses", "sessionId"), trimmed));
}

/** Hides the session from opencode's lists (it stays readable); the update goes to the session's own directory. */
export async function archiveSession(ctx: CoreContext, id: string): Promise<SessionRow> {
  const scoped = await sessionScope(ctx, id);
  return sessionRow(await scoped.engine.archive(id));
}

const ABORT_SETTLE_MS = 10_000;

/** Stops the session's turn (a no-op when idle); says whether one was running. */
export async function abortSession(ctx: CoreContext, id: string, options: DirectoryOption = {}): Promise<{ sessionId: string; wasRunning: boolean }> {
  const s = await engineIn(ctx, options.directory).getSession(validId(id, "ses", "sessionId"));
  const status = await runState(ctx, s);
  // Always abort: a prompt sent a moment ago is not busy yet (docs/opencode-behaviour.md §2) but is about to be.
  await ctx.engine.withDirectory(s.directory).abort(s.id);
  return { sessionId: s.id, wasRunning: status.type !== "idle" };
}

/** Deletes a session, aborting its turn first: deleting a busy session leaves its loop running (docs/opencode-behaviour.md §6). */
export async function deleteSession(
  ctx: CoreContext,
  id: string,
  options: DirectoryOption = {},
): Promise<{ sessionId: string; deleted: boolean; aborted: boolean }> {
  const s = await engineIn(ctx, options.directory).getSession(validId(id, "ses", "sessionId"));
  const engine = ctx.engine.withDirectory(s.directory);
  const status = await runState(ctx, s);
  const aborted = status.type !== "idle";
  if (aborted) {
    // Subscribe before aborting so the idle that ends the loop cannot be missed.
    const watch = await TurnWatch.start(engine, ctx.hub, s.id);
    try {
      await engine.abort(s.id);
      await watch.wait({ timeoutMs: ABORT_SETTLE_MS, returnOnBlocked: false });
    } finally {
      watch.close();
    }
  }
  const deleted = await engine.remove(s.id);
  return { sessionId: s.id, deleted, aborted };
}

export interface RevertState extends SessionRow {
  revert?: { messageId: string; partId?: string; diff?: string };
}

function revertState(s: Session): RevertState {
  return { ...sessionRow(s), ...(s.revert ? { revert: s.revert } : {}) };
}

/**
 * Undoes `messageId` and everything after it: in git projects files go back to before it. Messages
 * stay listed until the next prompt, which drops them; `unrevertSession` undoes this before that.
 */
export async function revertSession(ctx: CoreContext, id: string, options: DirectoryOption & { messageId: string; partId?: string }): Promise<RevertState> {
  const to = {
    messageId: validId(options.messageId, "msg", "messageId"),
    ...(options.partId !== undefined ? { partId: validId(options.partId, "prt", "partId") } : {}),
  };
  return revertState(await engineIn(ctx, options.directory).revert(validId(id, "ses", "sessionId"), to));
}

export async function unrevertSession(ctx: CoreContext, id: string, options: DirectoryOption = {}): Promise<RevertState> {
  return revertState(await engineIn(ctx, options.directory).unrevert(validId(id, "ses", "sessionId")));
}

const SYNC_TIMEOUT_MS = 300_000;

export interface CompactOptions extends DirectoryOption {
  /** Model that writes the summary; default: the model of the session's last user message. */
  model?: string;
  /** The call returns when the summary is written; default 5 min. */
  timeoutMs?: number;
}

/**
 * Replaces the session's history by a summary written by a model (1.x `session.summarize`,
 * synchronous; 2.x compacts with the session's own model, as an execution the call waits for).
 */
export async function compactSession(
  ctx: CoreContext,
  id: string,
  options: CompactOptions = {},
): Promise<{ sessionId: string; model?: string; compacted: boolean }> {
  const sessionID = validId(id, "ses", "sessionId");
  const engine = engineIn(ctx, options.directory);
  const capabilities = await engine.capabilities();
  if (!capabilities.compactNeedsModel && options.model !== undefined) {
    throw new UsageError(
      "This opencode compacts with the session's own model: leave `model` out (or switch the session's model first with oc_session set_model).",
    );
  }
  const ref = !capabilities.compactNeedsModel
    ? undefined
    : options.model !== undefined
      ? await resolveModelRef(ctx, options.model, options)
      : await sessionModel(ctx, sessionID, options.directory);
  const compacted = await engine.compact(sessionID, { ...(ref ? { model: ref } : {}), timeoutMs: options.timeoutMs ?? SYNC_TIMEOUT_MS });
  return { sessionId: sessionID, ...(ref ? { model: formatModel({ providerID: ref.providerID, modelID: ref.modelID }) } : {}), compacted };
}

/** The model the session last ran with, if this conductor may use it. */
async function sessionModel(ctx: CoreContext, sessionID: string, directory: string | undefined): Promise<ModelRef> {
  const user = await lastUserMessage(ctx, sessionID, directory);
  let ref: ModelRef | undefined = user?.info.role === "user" ? { providerID: user.info.model.providerID, modelID: user.info.model.modelID } : undefined;
  if (!ref) {
    const s = await engineIn(ctx, directory).getSession(sessionID);
    if (s.model) ref = { providerID: s.model.providerID, modelID: s.model.modelID };
  }
  if (!ref) throw new UsageError(`Session ${sessionID} has no messages, so it has no model yet. Pass \`model\` (one from the model list).`, "models");
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
export async function shellInSession(
  ctx: CoreContext,
  id: string,
  options: ShellOptions,
): Promise<{ sessionId: string; messageId: string; output: string; error?: string }> {
  const sessionID = validId(id, "ses", "sessionId");
  if (!options.command?.trim()) throw new UsageError("The shell command is empty. Give a command such as `ls -la`.");
  const ref = options.model !== undefined ? await resolveModelRef(ctx, options.model, options) : undefined;
  const result = await engineIn(ctx, options.directory).shell(sessionID, {
    command: options.command,
    agent: options.agent ?? "build",
    ...(ref ? { model: ref } : {}),
    timeoutMs: options.timeoutMs ?? SYNC_TIMEOUT_MS,
  });
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
export async function exportSession(ctx: CoreContext, id: string, options: DirectoryOption = {}): Promise<{ session: Session; messages: Message[] }> {
  const sessionID = validId(id, "ses", "sessionId");
  const engine = engineIn(ctx, options.directory);
  const [session, messages] = await Promise.all([engine.getSession(sessionID), engine.messages(sessionID)]);
  return { session, messages };
}

export async function sessionTodo(ctx: CoreContext, id: string, options: DirectoryOption = {}): Promise<Todo[]> {
  return engineIn(ctx, options.directory).todo(validId(id, "ses", "sessionId"));
}
