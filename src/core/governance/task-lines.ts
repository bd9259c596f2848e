// The lines the conductor adds to the task records for each task it starts here or on a private
// instance (delegate, each task of parallel): one when the task's session exists, one when the
// call has the task's result. What only the caller knew (batch, budget, checks, fallbacks asked for)
// goes in; live state the console reads from opencode itself.
import type { CheckRun } from "./checks.js";
import type { CoreSettings } from "../context.js";
import type { TurnSummary } from "../turns/summary.js";
import { firstLine, TaskRecords, taskRecordsPath, type TaskEnd, type TaskStart } from "./task-records.js";

export interface TaskStartInfo {
  sessionId: string;
  /** Who started it: a tool name, or the library verb. */
  origin: string;
  task: string;
  /** The batch of a parallel call, and the task's place in it. */
  batchId?: string;
  index?: number;
  title?: string;
  directory?: string;
  /** "instance" or "worktree": the session runs on a private instance (the console finds it in the registry). */
  isolation?: "shared" | "instance" | "worktree";
  model?: string;
  agent?: string;
  fallbacks?: string[];
  maxTokens?: number;
  maxCostUsd?: number;
  checks?: string[];
}

/** `server`: the opencode URL without credentials; `directory`: the conductor's when the task names none. */
export function startLine(t: TaskStartInfo, where: { server: string; directory?: string; settings: CoreSettings }): Omit<TaskStart, "time" | "pid"> {
  const budget = t.maxTokens !== undefined || t.maxCostUsd !== undefined ? { max_tokens: t.maxTokens, max_cost_usd: t.maxCostUsd } : undefined;
  return {
    event: "start",
    session_id: t.sessionId,
    ...(t.batchId ? { batch_id: t.batchId, index: t.index } : {}),
    tool: t.origin,
    server: where.server,
    ...(t.isolation === "instance" || t.isolation === "worktree" ? { isolation: t.isolation } : {}),
    directory: t.directory ?? where.directory,
    title: t.title,
    task: firstLine(t.task),
    model: t.model ?? where.settings.defaultModel,
    agent: t.agent,
    fallbacks: t.fallbacks ?? where.settings.fallbackModels,
    ...(budget ? { budget } : {}),
    checks: t.checks,
  };
}

export function endLine(r: TurnSummary & { checks?: CheckRun[] }): Omit<TaskEnd, "time"> {
  return {
    event: "end",
    session_id: r.sessionId,
    status: r.status,
    model: r.model,
    tokens: r.tokens?.total,
    cost: r.cost,
    files: r.files?.map((f) => f.path),
    error: r.error?.message,
    fallbacks: r.fallbacks?.length ? r.fallbacks.map((f) => ({ from: f.from, to: f.to, reason: f.reason, at: f.at })) : undefined,
    checks: r.checks?.map((c) => ({ round: c.round, command: c.command, passed: c.passed, exit: c.exit })),
  };
}

// One appender per file in this process: its writes are serialised (several conductors share it).
const appenders = new Map<string, TaskRecords>();

export function taskRecordsFor(stateDir: string): TaskRecords {
  const path = taskRecordsPath(stateDir);
  let records = appenders.get(path);
  if (!records) appenders.set(path, (records = new TaskRecords(path)));
  return records;
}
