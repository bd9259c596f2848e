// A task as a job carries it: everything a worker needs to run it with the same core as in-process
// work (prompt, model, fallbacks, agent, permissions, checks, budget, guard rails, isolation), and
// where it must run (a directory root some workers serve, or a git repository any worker can fetch).
import { isAbsolute, relative, resolve } from "node:path";
import type { DelegateOptions } from "../delegate.js";
import { quoted, UsageError } from "../errors.js";
import type { BatchBudget } from "./batch-budget.js";

export interface RepoSource {
  /** A git URL the worker can fetch (file://, a path, https://, ssh://). */
  url: string;
  /** Branch, tag or commit to check out (default HEAD of the remote). */
  ref?: string;
  /** Push the result as branch `conductor/<task-id>` (by the worker, never by the agent). */
  push?: boolean;
}

/**
 * The task's own fields are the in-process delegate's (one definition); `guard` defaults to true on
 * the queue: nobody is at a worker to answer a prompt.
 */
export interface TaskSpec extends Pick<
  DelegateOptions,
  | "task"
  | "title"
  | "model"
  | "fallbackModels"
  | "retryTimeoutMs"
  | "agent"
  | "agents"
  | "files"
  | "command"
  | "permissions"
  | "guard"
  | "checks"
  | "maxRounds"
  | "checkTimeoutMs"
  | "maxTokens"
  | "maxCostUsd"
  | "detail"
> {
  /** An absolute directory: runs only on a worker that serves a root holding it. */
  directory?: string;
  /** The root (advertised by workers) the directory lies in; set when the task is queued. */
  root?: string;
  repo?: RepoSource;
  /** Seconds the result and attempts stay readable (the caller's retention; set when queued). */
  retentionS?: number;
  /** The batch's cap this task shares with the batch's other tasks (set when a batch with one is queued). */
  batchBudget?: BatchBudget;
}

/** What a caller may pass to the queued delegate: the in-process options plus where to run. */
export type QueuedDelegateOptions = Omit<DelegateOptions, "sessionId" | "fork" | "onSession" | "onFallback" | "budget" | "checkEnv" | "onBlocked"> & {
  repo?: RepoSource;
  /** The idempotency key: the job id, so a repeat on any MCP server is the same task. */
  requestId?: string;
};

const FUNCTIONS = ["onProgress", "signal", "wait", "timeoutMs", "requestId", "returnOnBlocked"] as const;

/** The job's data: plain JSON, checked here so a bad task fails at the caller, not on a worker. */
export function toTaskSpec(o: QueuedDelegateOptions & { sessionId?: unknown; fork?: unknown }): TaskSpec {
  if (o.sessionId !== undefined || o.fork !== undefined) {
    throw new UsageError(
      "A queued task always starts a new session: continuing one (session_id/fork) runs where that session lives; unset OPENCODE_CONDUCTOR_QUEUE for it.",
    );
  }
  if (typeof o.task !== "string" || (!o.task.trim() && !o.command)) throw new UsageError("`task` is empty: say what the agent should do.");
  if (o.directory !== undefined && o.repo !== undefined)
    throw new UsageError("Give `directory` or `repo`, not both: a repo task runs in a fresh worktree of the repository.");
  if (o.directory !== undefined && !isAbsolute(o.directory))
    throw new UsageError(`A queued task's directory must be absolute (workers run on other machines): ${quoted(o.directory)}.`);
  if (o.repo !== undefined && (typeof o.repo.url !== "string" || !o.repo.url.trim()))
    throw new UsageError("`repo.url` is empty: give a git URL the workers can fetch.");
  if (o.files?.some((f) => !isAbsolute(f))) throw new UsageError("A queued task's files must be absolute paths on the worker's machine.");
  const spec: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(o)) {
    if (value === undefined || (FUNCTIONS as readonly string[]).includes(key) || typeof value === "function") continue;
    spec[key] = value;
  }
  if (o.directory !== undefined) spec.directory = resolve(o.directory);
  return spec as unknown as TaskSpec;
}

/** The provider a task's model belongs to (`provider/model`), for the fleet's per-provider limits. */
export function providerOf(spec: Pick<TaskSpec, "model">, defaultModel?: string): string {
  const model = spec.model ?? defaultModel;
  const slash = model?.indexOf("/") ?? -1;
  return model && slash > 0 ? model.slice(0, slash) : "default";
}

/** The longest advertised root that holds `directory`, or undefined. */
export function rootFor(directory: string, roots: Iterable<string>): string | undefined {
  let best: string | undefined;
  for (const root of roots) {
    const rel = relative(root, directory);
    if (rel.startsWith("..") || isAbsolute(rel)) continue;
    if (!best || root.length > best.length) best = root;
  }
  return best;
}
