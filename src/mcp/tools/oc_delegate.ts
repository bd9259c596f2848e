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
} from "../common.js";
import { startOnce } from "../request-replay.js";
import type { Conductor } from "../../core/conductor.js";
import { UsageError } from "../../core/errors.js";
import { guardedEnv, guardRules } from "../../core/policy/guard-rails.js";
import { permissionRules, type PermissionConfig, type Permissions } from "../../core/policy/permissions.js";
import type { InstanceLease } from "../connection.js";
import { defineTool, type ToolContext } from "../tool.js";
import { turnData, turnOutput, turnText } from "../turn-answer.js";
import { queuedAnswer } from "../queued.js";
import { isQueued } from "../../core/queue/outcome.js";

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
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  input,
  output: turnOutput,
  async run(args, ctx) {
    // With OPENCODE_CONDUCTOR_QUEUE, new work is a job for the fleet's workers (docs/scaling.md).
    if (args.session_id === undefined && args.isolation !== "instance") {
      const main = await ctx.conductor();
      if (main.queueSettings) return delegateQueued(main, args, ctx);
    }
    const lease = args.isolation === "instance" ? await leaseInstance(ctx, args.directory) : undefined;
    try {
      return await delegateOn(lease?.conductor ?? (await ctx.conductor(args.session_id)), lease, args, ctx);
    } finally {
      lease?.release();
    }
  },
});

/** The task's own fields, the same for work in this process and for a queued job. */
function taskOptions(args: Args) {
  return {
    task: args.task,
    title: args.title,
    model: args.model,
    fallbackModels: args.fallback_models,
    agent: args.agent,
    agents: args.agents,
    files: args.files,
    command: args.command,
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
    ...taskOptions(args),
    directory: args.directory,
    permissions: args.rules ?? args.permissions,
    guard: args.guard,
    ...wait,
    requestId: args.request_id,
  });
  if (!isQueued(r)) throw new Error("The queue answered without a task record.");
  await afterCancel(ctx, conductor, [r.task.id], args.interrupt_on_cancel);
  return queuedAnswer(r);
}

async function leaseInstance(ctx: ToolContext, directory: string | undefined): Promise<InstanceLease> {
  if (!ctx.instance) throw new UsageError('isolation "instance" is not available in this server.');
  const dir = directory ?? ctx.config.directory;
  if (!dir) throw new UsageError('isolation "instance" needs `directory`: the project the private server works in.');
  return ctx.instance(dir);
}

async function delegateOn(conductor: Conductor, lease: InstanceLease | undefined, args: Args, ctx: ToolContext) {
  {
    const wait = waitOptions(ctx, conductor, args);
    const replay = async (sessionId: string) => {
      const summary = args.wait === false ? (await conductor.result(sessionId, { detail: args.detail })).last : await conductor.wait(sessionId, wait);
      const data = { ...turnData(summary), replayed: true };
      return { text: `REPLAYED request_id ${args.request_id}: the first call's session, nothing new was started.\n${turnText(data)}`, data };
    };
    const start = async (onSession?: (id: string, index: number) => Promise<void>) => {
      let attach: string | undefined;
      // An instance's session goes into the registry as soon as it exists, so it is on record while it runs.
      const record = async (id: string) => {
        if (lease) attach = await lease.record({ id, title: args.title ?? args.task.split("\n")[0]!.slice(0, 60), model: args.model ?? "" });
        await onSession?.(id, 0);
      };
      const result = await conductor.delegate({
        ...taskOptions(args),
        directory: lease?.directory ?? args.directory,
        sessionId: args.session_id,
        fork: args.fork,
        permissions: guardedPermissions(lease, args),
        ...wait,
        // Checks of unattended work run without git credentials or tokens, like the agent.
        ...(lease || args.guard ? { checkEnv: guardedEnv(process.env) } : {}),
        onSession: lease || onSession ? record : undefined,
      });
      await afterCancel(ctx, conductor, [result.sessionId], args.interrupt_on_cancel);
      const data = { ...turnData(result), ...(attach ? { isolation: "instance", attach } : {}) };
      return { text: `${turnText(data)}${attach ? `\nWatch it live: ${attach}` : ""}`, data };
    };
    return startOnce(ctx, "oc_delegate", args.request_id, 1, start, (record) => replay(record.sessionIds[0]!));
  }
}

/** Instances always run under the guard rails (the caller's rules may restrict further); `guard` opts in on the shared server. */
function guardedPermissions(lease: InstanceLease | undefined, args: Args): Permissions | undefined {
  const own = args.rules ?? args.permissions;
  if (!lease && !args.guard) return own;
  const userRules = permissionRules(own);
  return lease ? lease.rules(userRules) : guardRules(userRules ? { userRules } : {});
}
