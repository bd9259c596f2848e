// What answers tasks/get, tasks/update and tasks/cancel (methods.ts registers them): loaded on
// the first of them, with the core it calls.
import { ProtocolError, ProtocolErrorCode, type ElicitResult, type McpServer, type ServerContext } from "@modelcontextprotocol/server";
import type { Config } from "../../config.js";
import type { Conductor } from "../../core/conductor.js";
import type { AuditLog } from "../../core/governance/audit.js";
import { UsageError } from "../../core/errors.js";
import type { Delegation } from "../../core/ledger/delegations.js";
import { QueuedMessageError } from "../../core/placement/send-cancel.js";
import { formValues } from "../approvals/rounds.js";
import { settle } from "../elicit.js";
import { peerOf } from "../peer.js";
import type { ToolContext } from "../tool-def.js";
import { readInputMemory, writeInputMemory, type InputMemory } from "./input-memory.js";
import { detailedTask } from "./task-view.js";
import { declaresTasks, MISSING_CAPABILITY, TASKS_EXTENSION } from "./wire.js";

/** What the tasks/* answers need of the server that registered them (methods.ts). */
export interface TaskMethodsOptions {
  config: Config;
  conductor(sessionId?: string): Promise<Conductor>;
  scrub(text: string): string;
  audit: AuditLog;
}

export async function getTask(server: McpServer, o: TaskMethodsOptions, params: { taskId: string }, ctx: ServerContext) {
  requireExtension(server, ctx);
  const d = await delegation(o, params.taskId, "retrieve");
  const memory = await readInputMemory(o.config.stateDir, d.id);
  const task = detailedTask(d, o.scrub, new Set(memory.returned));
  if (task.status === "input_required") await remember(o, d.id, memory, Object.keys(task.inputRequests));
  return { resultType: "complete" as const, ...task };
}

export async function updateTask(
  server: McpServer,
  o: TaskMethodsOptions,
  params: { taskId: string; inputResponses?: Record<string, unknown> },
  ctx: ServerContext,
) {
  requireExtension(server, ctx);
  const d = await delegation(o, params.taskId, "update");
  const responses = params.inputResponses ?? (ctx.mcpReq.inputResponses as Record<string, unknown> | undefined) ?? {};
  await answerInputs(server, ctx, o, d, responses);
  return { resultType: "complete" as const };
}

export async function cancelTask(server: McpServer, o: TaskMethodsOptions, params: { taskId: string }, ctx: ServerContext) {
  requireExtension(server, ctx);
  await delegation(o, params.taskId, "cancel");
  try {
    await (await o.conductor()).delegations.cancel(params.taskId);
  } catch (error) {
    // A sent message queued behind another turn that this opencode cannot withdraw: the task goes on, and the caller is told why.
    if (error instanceof QueuedMessageError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to cancel task: ${o.scrub(error.message)}`);
    throw error;
  }
  return { resultType: "complete" as const };
}

/** The spec: a client that did not declare the extension on this request gets -32021. */
function requireExtension(server: McpServer, ctx: ServerContext): void {
  if (declaresTasks(peerOf(server, ctx).capabilities)) return;
  throw new ProtocolError(MISSING_CAPABILITY, "Missing required client capability", { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
}

/** The delegation behind `taskId`; an unknown, malformed or expired id is -32602, as the spec asks. */
async function delegation(o: TaskMethodsOptions, taskId: string, verb: string): Promise<Delegation> {
  const conductor = await o.conductor();
  try {
    return await conductor.delegations.get(taskId);
  } catch (error) {
    if (error instanceof UsageError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to ${verb} task: ${o.scrub(error.message)}`);
    throw error;
  }
}

async function remember(o: TaskMethodsOptions, taskId: string, memory: InputMemory, keys: string[]): Promise<void> {
  const fresh = keys.filter((k) => memory.shown[k] === undefined);
  if (fresh.length === 0) return;
  const now = Date.now();
  await writeInputMemory(o.config.stateDir, taskId, { ...memory, shown: { ...memory.shown, ...Object.fromEntries(fresh.map((k) => [k, now])) } });
}

/** Settles each answer to a request that still waits; other keys are ignored (spec: not outstanding). */
async function answerInputs(server: McpServer, ctx: ServerContext, o: TaskMethodsOptions, d: Delegation, responses: Record<string, unknown>): Promise<void> {
  const memory = await readInputMemory(o.config.stateDir, d.id);
  const returned = new Set(memory.returned);
  const open = (d.pending ?? []).filter((r) => !returned.has(r.id) && responses[r.id] !== undefined);
  if (open.length === 0) return;
  const conductor = await o.conductor();
  const tool = taskToolContext(server, ctx, o, d, conductor, returned);
  const now = Date.now();
  for (const r of open) {
    const answer = elicitResultOf(responses[r.id]);
    if (!answer) continue;
    await settle(tool, conductor, r, answer, Math.max(0, now - (memory.shown[r.id] ?? now)));
  }
  if (returned.size > memory.returned.length) await writeInputMemory(o.config.stateDir, d.id, { ...memory, returned: [...returned] });
}

/** An elicitation answer as the spec shapes it; anything else is no answer. */
function elicitResultOf(value: unknown): ElicitResult | undefined {
  const v = value as { action?: unknown; content?: unknown } | null;
  if (!v || typeof v !== "object" || (v.action !== "accept" && v.action !== "decline" && v.action !== "cancel")) return undefined;
  const content = v.content && typeof v.content === "object" && !Array.isArray(v.content) ? formValues(v.content as Record<string, unknown>) : undefined;
  return { action: v.action, ...(content ? { content } : {}) };
}

/** What settle() needs of a tool call, for an answer that came through the task: audited as the task's tool. */
function taskToolContext(
  server: McpServer,
  ctx: ServerContext,
  o: TaskMethodsOptions,
  d: Delegation,
  conductor: Conductor,
  returned: Set<string>,
): ToolContext {
  const peer = peerOf(server, ctx);
  return {
    conductor: (sessionId) => (sessionId ? o.conductor(sessionId) : Promise.resolve(conductor)),
    config: o.config,
    signal: ctx.mcpReq.signal,
    refused: [],
    rounds: { ask: () => false, gaveBack: (id) => void returned.add(id) },
    progress: () => undefined,
    log: () => undefined,
    async audit(entry) {
      const line = { tool: d.origin, ...(peer.client ? { client: peer.client } : {}), ...entry, detail: { ...entry.detail, task_id: d.id } };
      await o.audit.append(JSON.parse(o.scrub(JSON.stringify(line))));
    },
  };
}
