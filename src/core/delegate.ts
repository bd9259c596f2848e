// delegate(): hand one task to an opencode agent, in a new, continued or forked session, and
// (by default) wait for the turn to end.
import { stat } from "node:fs/promises";
import { basename, extname, isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Schemas } from "../client/types.js";
import type { CoreContext } from "./context.js";
import { resolveModelRef } from "./catalog/models.js";
import { quoted, UsageError } from "./errors.js";
import { existingDirectory } from "./inputs/directory.js";
import { DEFAULT_RETRY_TIMEOUT_S, resolveFallbacks, startWatchdog } from "./turns/fallback.js";
import type { FallbackRecord } from "./turns/summary.js";
import { governed, type GovernedSummary, type GovernOptions } from "./governance/governed.js";
import type { ModelRef } from "./catalog/model-resolve.js";
import { guardedEnv, guardRules } from "./policy/guard-rails.js";
import { permissionRules, type Permissions } from "./policy/permissions.js";
import { sessionScope } from "./sessions/scope.js";
import { runTurn, type RunTurnOptions } from "./turns/turn.js";
import type { TurnWatch } from "./turns/watch.js";

export interface DelegateOptions extends Omit<RunTurnOptions, "fresh">, GovernOptions {
  /** What to do, in words. With `command`, the command's arguments. */
  task: string;
  /** Continue this session instead of starting a new one. */
  sessionId?: string;
  /** With `sessionId`: fork it first and continue the copy, leaving the original untouched. */
  fork?: boolean;
  /** Project directory (must exist). Default: the client's directory, else the server's. */
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
  /** Models to switch to, in order, when the model keeps failing (default: settings.fallbackModels). See turns/fallback.ts. */
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
  if (typeof o.task !== "string" || (!o.task.trim() && !o.command)) throw new UsageError("`task` is empty: say what the agent should do.");
  if (o.fork && !o.sessionId) throw new UsageError("`fork: true` needs `sessionId`: the session to fork.");
  // A continued session runs in its own directory (status and requests are per directory, docs/opencode-behaviour.md §9).
  const scoped: CoreContext =
    o.directory !== undefined ? { ...ctx, client: ctx.client.withDirectory(await existingDirectory(o.directory)) } : o.sessionId ? await sessionScope(ctx, o.sessionId) : ctx;
  const { client } = scoped;
  const directory = client.directory;
  const own = permissionRules(o.permissions);
  const rules = o.guard ? guardRules(own ? { userRules: own } : {}) : own;
  const remembered = o.sessionId ? ctx.sessionDefaults?.get(o.sessionId) : undefined;
  const modelInput = o.model ?? remembered?.model ?? ctx.settings.defaultModel;
  const agent = o.agent ?? remembered?.agent;
  const model = modelInput ? await resolveModelRef(scoped, modelInput) : undefined;
  const fallbacks = await resolveFallbacks(scoped, o.fallbackModels ?? ctx.settings.fallbackModels ?? [], model);
  const files = await fileParts(o.files ?? [], directory);
  if (o.command) await checkCommand(scoped, o.command);

  let sessionId: string;
  if (o.sessionId) {
    sessionId = o.fork ? (await client.call("session.fork", { path: { sessionID: o.sessionId }, body: {} })).id : o.sessionId;
    if (rules) await client.call("session.update", { path: { sessionID: sessionId }, body: { permission: rules } });
  } else {
    // A title given up front also spares a title request to the model (docs/opencode-behaviour.md §0.3).
    const created = await client.call("session.create", { body: { title: o.title ?? titleFrom(o.command ? `/${o.command} ${o.task}` : o.task), ...(rules ? { permission: rules } : {}) } });
    sessionId = created.id;
  }
  await o.onSession?.(sessionId);

  const sendWith = (model: ModelRef | undefined) => async (watch: { fail(error: unknown): void }) => {
    if (o.command) {
      // The command route answers only when the turn ends: do not hold the caller on it.
      const body = {
        command: o.command,
        arguments: o.task,
        ...(agent ? { agent } : {}),
        ...(model ? { model: `${model.providerID}/${model.modelID}`, ...(model.variant ? { variant: model.variant } : {}) } : {}),
        ...(files.length > 0 ? { parts: files } : {}),
      };
      client.call("session.command", { path: { sessionID: sessionId }, body }, { timeoutMs: 24 * 3600_000 }).catch((error: unknown) => watch.fail(error));
      return;
    }
    await client.call("session.prompt_async", { path: { sessionID: sessionId }, body: promptBody({ ...o, agent }, model, files) });
  };

  // With fallbacks, a watchdog follows the task's turn and may re-send it with the next model.
  let current = model;
  const retryTimeoutMs = o.retryTimeoutMs ?? (ctx.settings.retryTimeoutS ?? DEFAULT_RETRY_TIMEOUT_S) * 1000;
  const plan = { model, fallbacks, retryTimeoutMs, agent, resend: (m: ModelRef, w: TurnWatch) => sendWith(m)(w), onFallback: (r: FallbackRecord, m: ModelRef) => ((current = m), o.onFallback?.(r)) };
  const send = fallbacks.length === 0 ? sendWith(model) : (watch: TurnWatch) => startWatchdog(scoped, watch, plan, () => sendWith(model)(watch));

  // Gate fix rounds go to the same session as plain prompts, with the task's agent and the model in use.
  const followUp = (text: string) => () => client.call("session.prompt_async", { path: { sessionID: sessionId }, body: promptBody({ task: text, agent }, current, []) }).then(() => undefined);
  const governance = { ...o, fresh: !o.sessionId, ...(o.guard && !o.checkEnv ? { checkEnv: guardedEnv(process.env) } : {}) };
  const summary = await governed(scoped, sessionId, governance, (text, options) => runTurn(scoped, sessionId, text === undefined ? send : followUp(text), options));
  return directory === undefined ? summary : { ...summary, directory };
}

/** An unknown command would only fail inside the background command request: say so up front. */
async function checkCommand(ctx: CoreContext, name: string): Promise<void> {
  const commands = await ctx.client.call("command.list");
  if (commands.some((c) => c.name === name)) return;
  throw new UsageError(`Unknown command ${quoted(name)}. Available commands: ${commands.map((c) => c.name).join(", ") || "(none)"}.`);
}

function promptBody(o: Pick<DelegateOptions, "task" | "agents" | "agent">, model: ModelRef | undefined, files: Schemas["FilePartInput"][]) {
  const parts: Array<Schemas["TextPartInput"] | Schemas["FilePartInput"] | Schemas["AgentPartInput"]> = [{ type: "text", text: o.task }, ...files];
  for (const name of o.agents ?? []) parts.push({ type: "agent", name });
  return {
    parts,
    ...(model ? { model: { providerID: model.providerID, modelID: model.modelID } } : {}),
    ...(model?.variant ? { variant: model.variant } : {}),
    ...(o.agent ? { agent: o.agent } : {}),
  };
}

async function fileParts(files: string[], directory: string | undefined): Promise<Schemas["FilePartInput"][]> {
  return Promise.all(
    files.map(async (file) => {
      const path = isAbsolute(file) ? file : resolve(directory ?? process.cwd(), file);
      const info = await stat(path).catch(() => undefined);
      if (!info?.isFile()) throw new UsageError(`Attached file ${quoted(path)} does not exist (or is not a file).`);
      return { type: "file" as const, mime: mimeOf(path), url: pathToFileURL(path).href, filename: basename(path) };
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
