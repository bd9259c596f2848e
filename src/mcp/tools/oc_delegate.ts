import { z } from "zod";
import { DEFAULT_MAX_ROUNDS } from "../../core/governance/checks.js";
import {
  afterCancel,
  clamped,
  approvalsField,
  detailField,
  directoryField,
  interruptOnCancelField,
  maxCostField,
  maxTokensField,
  requestIdField,
  timeoutField,
  waitOptions,
} from "../shared-fields.js";
import { startOnce } from "../request-replay.js";
import type { Conductor } from "../../core/conductor.js";
import type { PermissionConfig } from "../../core/policy/permissions.js";
import { defineTool, type ToolContext } from "../tool-def.js";
import { turnData, turnOutput, turnText } from "../turn-answer.js";
import { queuedAnswer } from "../queued.js";
import { isQueued } from "../../core/queue/outcome.js";
import { recordTaskEnd, recordTaskStart } from "../task-record.js";

/** opencode.json's `permission` shape; checked by the core with an error that names the bad entry. */
export const rulesField = z.record(z.string(), z.unknown()).transform((rules) => rules as PermissionConfig);

const input = {
  task: z.string(),
  directory: directoryField,
  session_id: z.string().optional().describe("Continue this session"),
  fork: z.boolean().optional().describe("Copy session_id first"),
  title: z.string().optional(),
  model: z.string().optional(),
  fallback_models: z.array(z.string()).optional().describe("If the model keeps failing"),
  agent: z.string().optional(),
  agents: z.array(z.string()).optional().describe("Sub-agents allowed"),
  files: z.array(z.string()).optional(),
  command: z.string().optional().describe("Slash command (no /); task: its arguments"),
  permissions: z.enum(["auto", "readonly", "agent"]).optional().describe("auto: allow all; agent (default): its rules"),
  rules: rulesField.optional().describe('As opencode.json "permission", e.g. {"bash":{"git push*":"deny"}}; last match wins'),
  wait: z.boolean().optional(),
  timeout_s: timeoutField,
  detail: detailField,
  interrupt_on_cancel: interruptOnCancelField,
  approvals: approvalsField,
  checks: z.array(z.string()).optional().describe("Must exit 0 after; failures go back to the agent"),
  max_rounds: clamped(1, 10, true).optional().describe(`Default ${DEFAULT_MAX_ROUNDS}`),
  check_timeout_s: clamped(1, 3600).optional(),
  max_tokens: maxTokensField,
  max_cost_usd: maxCostField,
  request_id: requestIdField,
  isolation: z.enum(["shared", "instance"]).optional().describe("instance: private guarded opencode"),
  guard: z.boolean().optional().describe("Guard rails on the shared server"),
};

type Args = z.output<z.ZodObject<typeof input>>;

export const ocDelegate = defineTool({
  name: "oc_delegate",
  title: "Delegate a coding task",
  description:
    "Hand a coding task to an opencode agent (new session, or continue/fork session_id); returns its answer, files changed, tokens, cost. " +
    '"running": oc_wait; "blocked": oc_answer, then oc_wait.',
  toolset: "delegate",
  guide: [
    "oc_delegate runs one task (new, continued or forked session) and returns the agent's answer, files changed and cost; oc_delegate_parallel runs independent tasks at once; oc_ask asks a quick read-only question.",
    'Long work returns status "running" with a session_id before your client times out: call oc_wait with it. Nothing is lost.',
  ],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  input,
  output: turnOutput,
  async run(args, ctx) {
    const conductor = await ctx.conductor(args.session_id);
    // With OPENCODE_CONDUCTOR_QUEUE, new work is a job for the fleet's workers (docs/scaling.md).
    if (conductor.queueSettings && args.session_id === undefined && args.isolation !== "instance") return delegateQueued(conductor, args, ctx);
    return delegateOn(conductor, args, ctx);
  },
});

/** The task's own fields, the same for work in this process and on the queue. */
function taskOptions(args: Args) {
  return {
    title: args.title,
    model: args.model,
    fallbackModels: args.fallback_models,
    agent: args.agent,
    agents: args.agents,
    files: args.files,
    command: args.command,
    permissions: args.rules ?? args.permissions,
    wait: args.wait,
    checks: args.checks,
    maxRounds: args.max_rounds,
    checkTimeoutMs: args.check_timeout_s === undefined ? undefined : args.check_timeout_s * 1000,
    maxTokens: args.max_tokens,
    maxCostUsd: args.max_cost_usd,
  };
}

/** The whole task goes into the job; request_id is its job id, so a repeat is the same task fleet-wide. */
async function delegateQueued(conductor: Conductor, args: Args, ctx: ToolContext) {
  const { onBlocked: _, ...wait } = waitOptions(ctx, conductor, args);
  const r = await conductor.delegate({
    task: args.task,
    directory: args.directory,
    guard: args.guard,
    ...taskOptions(args),
    ...wait,
    requestId: args.request_id,
  });
  if (!isQueued(r)) throw new Error("The queue answered without a task record.");
  await afterCancel(ctx, conductor, [r.task.id], args.interrupt_on_cancel);
  return queuedAnswer(r);
}

async function delegateOn(conductor: Conductor, args: Args, ctx: ToolContext) {
  {
    const wait = waitOptions(ctx, conductor, args);
    const replay = async (sessionId: string) => {
      const summary = args.wait === false ? (await conductor.result(sessionId, { detail: args.detail })).last : await conductor.wait(sessionId, wait);
      const data = { ...turnData(summary), replayed: true };
      return { text: `REPLAYED request_id ${args.request_id}: the first call's session, nothing new was started.\n${turnText(data)}`, data };
    };
    const start = async (onSession?: (id: string, index: number) => Promise<void>) => {
      const result = await conductor.delegate({
        task: args.task,
        directory: args.directory ?? (args.isolation === "instance" ? ctx.config.directory : undefined),
        isolation: args.isolation,
        guard: args.guard,
        sessionId: args.session_id,
        fork: args.fork,
        ...taskOptions(args),
        ...wait,
        onSession: async (id) => {
          await recordTaskStart(ctx, conductor, {
            sessionId: id,
            tool: "oc_delegate",
            task: args.task,
            title: args.title,
            directory: args.directory,
            isolation: args.isolation,
            model: args.model,
            agent: args.agent,
            fallbacks: args.fallback_models,
            maxTokens: args.max_tokens,
            maxCostUsd: args.max_cost_usd,
            checks: args.checks,
          });
          await onSession?.(id, 0);
        },
      });
      await afterCancel(ctx, conductor, [result.sessionId], args.interrupt_on_cancel);
      const data = { ...turnData(result), ...(result.attach ? { isolation: "instance", attach: result.attach } : {}) };
      await recordTaskEnd(ctx, data);
      return { text: `${turnText(data)}${result.attach ? `\nWatch it live: ${result.attach}` : ""}`, data };
    };
    return startOnce(ctx, "oc_delegate", args.request_id, 1, start, (record) => replay(record.sessionIds[0]!));
  }
}
