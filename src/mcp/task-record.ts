// The lines oc_delegate and oc_delegate_parallel add to the state dir's task records (for the web
// console): one when a task's session exists, one when the call has the task's result.
import type { Conductor } from "../core/conductor.js";
import { firstLine } from "../core/governance/task-records.js";
import type { ToolContext } from "./tool-def.js";
import type { TurnData } from "./turn-answer.js";

export interface TaskStartInfo {
  sessionId: string;
  tool: string;
  task: string;
  batchId?: string;
  index?: number;
  title?: string;
  directory?: string;
  /** "instance": the session runs on a private instance (the console finds it in the registry). */
  isolation?: "shared" | "instance";
  model?: string;
  agent?: string;
  fallbacks?: string[];
  maxTokens?: number;
  maxCostUsd?: number;
  checks?: string[];
}

export function recordTaskStart(ctx: ToolContext, conductor: Conductor, t: TaskStartInfo): Promise<void> {
  if (!ctx.tasks) return Promise.resolve();
  const budget = t.maxTokens !== undefined || t.maxCostUsd !== undefined ? { max_tokens: t.maxTokens, max_cost_usd: t.maxCostUsd } : undefined;
  return ctx.tasks.append({
    event: "start",
    session_id: t.sessionId,
    ...(t.batchId ? { batch_id: t.batchId, index: t.index } : {}),
    tool: t.tool,
    server: conductor.client.url,
    ...(t.isolation === "instance" ? { isolation: "instance" as const } : {}),
    directory: t.directory ?? conductor.client.directory ?? ctx.config.directory,
    title: t.title,
    task: firstLine(t.task),
    model: t.model ?? ctx.config.defaultModel,
    agent: t.agent,
    fallbacks: t.fallbacks ?? ctx.config.fallbackModels,
    ...(budget ? { budget } : {}),
    checks: t.checks,
  });
}

export function recordTaskEnd(ctx: ToolContext, d: TurnData): Promise<void> {
  if (!ctx.tasks) return Promise.resolve();
  return ctx.tasks.append({
    event: "end",
    session_id: d.session_id,
    status: d.status,
    model: d.model,
    tokens: d.tokens?.total,
    cost: d.cost,
    files: d.files?.map((f) => f.path),
    error: d.error?.message,
    fallbacks: d.fallbacks,
    checks: d.checks?.map((c) => ({ round: c.round, command: c.command, passed: c.passed, exit: c.exit })),
  });
}
