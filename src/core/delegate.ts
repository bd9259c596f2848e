// delegate(): hand one task to an opencode agent, in a new, continued or forked session, and
// (by default) wait for the turn to end.
import { stat } from "node:fs/promises";
import { basename, extname, isAbsolute, resolve } from "node:path";
import type { CoreContext } from "./context.js";
import type { AttachedFile } from "./engine/engine.js";
import { missingName } from "./catalog/catalogs.js";
import { resolveModelRef } from "./catalog/models.js";
import { quoted, UsageError } from "./errors.js";
import { existingDirectory } from "./inputs/directory.js";
import { validPromptText } from "./inputs/prompt-text.js";
import { DEFAULT_RETRY_TIMEOUT_S, resolveFallbacks } from "./turns/fallback-policy.js";
import { startWatchdog } from "./turns/fallback-watchdog.js";
import type { FallbackRecord } from "./turns/summary.js";
import { governed, type GovernedSummary, type GovernOptions } from "./governance/governed.js";
import type { ModelRef } from "./catalog/model-resolve.js";
import { guardedEnv, guardRules } from "./policy/guard-rails.js";
import { permissionRules, type Permissions } from "./policy/permissions.js";
import { sessionScope } from "./sessions/scope.js";
import { runTurn, type RunTurnOptions } from "./turns/turn.js";
import { Deadline } from "./turns/deadline.js";
import type { TurnWatch } from "./turns/watch.js";

export interface DelegateOptions extends Omit<RunTurnOptions, "fresh">, GovernOptions {
  /** What to do, in words. With `command`, the command's arguments. */
  task: string;
  /** Continue this session instead of starting a new one. */
  sessionId?: string;
  /** With `sessionId`: fork it first and continue the copy, leaving the original untouched. */
  fork?: boolean;
  /** Project directory (must exist). Default: the engine's directory, else the server's. */
  directory?: string;
  title?: string;
  /** `provider/model`, `provider/model#variant`, or a name such as `sonnet`. */
  model?: string;
  /** Primary agent to run the task (e.g. `build`, `plan`). */
  agent?: string;
  /** Sub-agents to mention, so the agent can hand parts of the task to them. */
  agents?: string[];
  /** Files to attach (paths, absolute or relative to the directory). */
  files?: string[];
  /** Run this slash command (without the slash); `task` becomes its arguments. */
  command?: string;
  permissions?: Permissions;
  /**
   * Unattended work: the guard rails (policy/guard-rails.ts) around `permissions`, nothing may ask,
   * and checks run without git credentials or tokens, like the agent.
   */
  guard?: boolean;
  /** Told the session id as soon as the session exists (e.g. to record an idempotent start). */
  onSession?: (sessionId: string) => void | Promise<void>;
  /** Models to switch to, in order, when the model keeps failing (default: settings.fallbackModels). See turns/fallback-policy.ts. */
  fallbackModels?: string[];
  /** How long the session may stay in `retry` before the switch (default: settings.retryTimeoutS, 90 s). */
  retryTimeoutMs?: number;
  /** Told each model switch (e.g. to record it elsewhere). */
  onFallback?: (record: FallbackRecord) => void;
}

export type DelegateResult = GovernedSummary & {
  directory?: string;
};

export async function delegate(ctx: CoreContext, o: DelegateOptions): Promise<DelegateResult> {
  // The caller's timeout counts from here: the reads before the prompt take from it.
  const deadline = Deadline.after(o.timeoutMs);
  if (typeof o.task !== "string" || (!o.task.trim() && !o.command)) throw new UsageError("`task` is empty: say what the agent should do.");
  validPromptText(o.task, "task", { files: true });
  if (o.fork && !o.sessionId) throw new UsageError("`fork: true` needs `sessionId`: the session to fork.");
  // Neither major passes sub-agents with a command (1.x drops them, 2.x does not tell the model).
  if (o.command && o.agents?.length)
    throw new UsageError(
      "`agents` cannot go with `command` (opencode would not pass them on): name the sub-agents in the task, which becomes the command's arguments, or leave `command` out.",
    );
  // A continued session runs in its own directory (status and requests are per directory, docs/opencode-behaviour.md §9).
  const scoped: CoreContext =
    o.directory !== undefined ? inDirectory(ctx, await existingDirectory(o.directory)) : o.sessionId ? await sessionScope(ctx, o.sessionId) : ctx;
  const { engine } = scoped;
  const directory = engine.directory;
  const own = permissionRules(o.permissions);
  const rules = o.guard ? guardRules(own ? { userRules: own } : {}) : own;
  const remembered = o.sessionId ? ctx.sessionDefaults?.get(o.sessionId) : undefined;
  const modelInput = o.model ?? remembered?.model ?? ctx.settings.defaultModel;
  const agent = o.agent ?? remembered?.agent;
  // The checks do not depend on each other: their requests go out together.
  const [model, files] = await Promise.all([modelInput ? resolveModelRef(scoped, modelInput) : undefined, fileParts(o.files ?? [], directory)]);
  const [fallbacks] = await Promise.all([
    resolveFallbacks(scoped, o.fallbackModels ?? ctx.settings.fallbackModels ?? [], model),
    engine.checkPrompt({ text: o.task, files }),
    o.command ? validateCommand(scoped, o.command) : undefined,
    agent || o.agents?.length ? validateAgents(scoped, [...(agent ? [agent] : []), ...(o.agents ?? [])]) : undefined,
  ]);

  let sessionId: string;
  if (o.sessionId) {
    sessionId = o.fork ? (await engine.fork(o.sessionId, {})).id : o.sessionId;
    if (rules) await engine.setRules(sessionId, rules);
  } else {
    // A title given up front also spares a title request to the model (docs/opencode-behaviour.md §0.3).
    const title = o.title ?? titleFrom(o.command ? `/${o.command} ${o.task}` : o.task);
    // With what its first prompt asks for, so an engine that can sets it at creation (2.x: one request less each).
    const created = await engine.createSession({ title, ...(rules ? { rules } : {}), ...(model ? { model } : {}), ...(agent ? { agent } : {}) });
    sessionId = created.id;
  }
  await o.onSession?.(sessionId);

  const sendWith = (model: ModelRef | undefined) => async (watch: { fail(error: unknown): void }) => {
    const input = {
      text: o.task,
      ...(model ? { model } : {}),
      ...(agent ? { agent } : {}),
      ...(o.agents ? { agents: o.agents } : {}),
      files,
      ...(o.command ? { command: o.command } : {}),
    };
    await engine.prompt(sessionId, input, (error: unknown) => watch.fail(error));
  };

  // With fallbacks, a watchdog follows the task's turn and may re-send it with the next model.
  let current = model;
  const retryTimeoutMs = o.retryTimeoutMs ?? (ctx.settings.retryTimeoutS ?? DEFAULT_RETRY_TIMEOUT_S) * 1000;
  const plan = {
    model,
    fallbacks,
    retryTimeoutMs,
    agent,
    resend: (m: ModelRef, w: TurnWatch) => sendWith(m)(w),
    onFallback: (r: FallbackRecord, m: ModelRef) => ((current = m), o.onFallback?.(r)),
  };
  const send = fallbacks.length === 0 ? sendWith(model) : (watch: TurnWatch) => startWatchdog(scoped, watch, plan, () => sendWith(model)(watch));

  // Gate fix rounds go to the same session as plain prompts, with the task's agent and the model in use.
  const followUp = (text: string) => () =>
    engine.prompt(sessionId, { text, ...(current ? { model: current } : {}), ...(agent ? { agent } : {}) }, () => undefined);
  const governance = { ...o, timeoutMs: deadline.waitMs, fresh: !o.sessionId, ...(o.guard && !o.checkEnv ? { checkEnv: guardedEnv(process.env) } : {}) };
  const summary = await governed(scoped, sessionId, governance, (text, options) =>
    runTurn(scoped, sessionId, text === undefined ? send : followUp(text), options),
  );
  return directory === undefined ? summary : { ...summary, directory };
}

/** An unknown command would only fail inside the background command request: say so up front. */
async function validateCommand(ctx: CoreContext, name: string): Promise<void> {
  const missing = await missingName(ctx, "commands", [name]);
  if (!missing) return;
  throw new UsageError(`Unknown command ${quoted(name)}. Available commands: ${missing.rows.map((c) => c.name).join(", ") || "(none)"}.`);
}

/** An unknown agent would only fail once the turn runs (2.x: with no recorded message): say so up front. */
async function validateAgents(ctx: CoreContext, names: string[]): Promise<void> {
  const missing = await missingName(ctx, "agents", names);
  if (!missing) return;
  throw new UsageError(`Unknown agent ${quoted(missing.name)}. Available agents: ${missing.rows.map((a) => a.name).join(", ") || "(none)"}.`);
}

/** The context bound to another project directory (new sessions are created there). */
export function inDirectory(ctx: CoreContext, directory: string): CoreContext {
  return { ...ctx, engine: ctx.engine.withDirectory(directory) };
}

async function fileParts(files: string[], directory: string | undefined): Promise<AttachedFile[]> {
  return Promise.all(
    files.map(async (file) => {
      const path = isAbsolute(file) ? file : resolve(directory ?? process.cwd(), file);
      const info = await stat(path).catch(() => undefined);
      if (!info?.isFile()) throw new UsageError(`Attached file ${quoted(path)} does not exist (or is not a file).`);
      return { path, mime: mimeOf(path), name: basename(path) };
    }),
  );
}

const MIME: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".pdf": "application/pdf",
};

function mimeOf(path: string): string {
  return MIME[extname(path).toLowerCase()] ?? "text/plain";
}

export function titleFrom(task: string): string {
  const line = task.trim().split("\n")[0] ?? "task";
  return line.length > 60 ? `${line.slice(0, 57)}...` : line || "task";
}
