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
  timeoutMs,
  waitOptions,
} from "../shared-fields.js";
import type { PermissionConfig } from "../../core/policy/permissions.js";
import { defineTool } from "../tool-def.js";
import { turnOutput } from "../turn-answer.js";
import { taskAnswer } from "../placed-answer.js";

/** opencode.json's `permission` shape; checked by the core with an error that names the bad entry. */
export const rulesField = z.record(z.string(), z.unknown()).transform((rules) => rules as PermissionConfig);

const input = {
  task: z.string(),
  directory: directoryField,
  session_id: z.string().optional().describe("Continue this session"),
  fork: z.boolean().optional().describe("Copy session_id first"),
  title: z.string().optional(),
  model: z.string().optional(),
  fallback_models: z.array(z.string()).optional(),
  agent: z.string().optional(),
  agents: z.array(z.string()).optional().describe("Sub-agents allowed"),
  files: z.array(z.string()).optional(),
  command: z.string().optional().describe("Slash command (no /); task: its arguments"),
  permissions: z.enum(["auto", "readonly", "agent"]).optional(),
  rules: rulesField.optional().describe('opencode.json "permission", e.g. {"bash":{"rm *":"deny"}}'),
  wait: z.boolean().optional(),
  timeout_s: timeoutField,
  detail: detailField,
  interrupt_on_cancel: interruptOnCancelField,
  approvals: approvalsField,
  checks: z.array(z.string()).optional().describe("Commands that must pass"),
  max_rounds: clamped(1, 10, true).optional(),
  check_timeout_s: clamped(1, 3600).optional(),
  max_tokens: maxTokensField,
  max_cost_usd: maxCostField,
  request_id: requestIdField,
  isolation: z.enum(["shared", "instance", "worktree"]).optional(),
  setup: z.string().optional(),
  base: z.string().optional(),
  guard: z.boolean().optional(),
};

type Args = z.output<z.ZodObject<typeof input>>;

/** The core's options for this call's arguments (the wait's own options aside). */
function taskOptions(args: Args) {
  return {
    task: args.task,
    directory: args.directory,
    isolation: args.isolation,
    setup: args.setup,
    base: args.base,
    guard: args.guard,
    sessionId: args.session_id,
    fork: args.fork,
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
    requestId: args.request_id,
    origin: "oc_delegate",
  };
}

export const ocDelegate = defineTool({
  name: "oc_delegate",
  title: "Delegate a coding task",
  description: "A coding task for an opencode agent (new session, or continue/fork session_id): its answer, files changed, cost.",
  toolset: "delegate",
  guide: [
    "oc_delegate runs one task (new, continued or forked session) and returns the agent's answer, files changed and cost; oc_delegate_parallel runs independent tasks at once; oc_ask asks a quick read-only question.",
    'Long work returns status "running" with a session_id before your client times out: call oc_wait with it. Nothing is lost.',
    'isolation "worktree" gives each task a git branch of its own (your checkout is not touched); bring the work back with oc_session merge. isolation "instance" runs it on a private opencode with guard rails (no git push, gh, npm publish, web access or writes outside the directory); guard: true sets the same rails on the shared server.',
    "permissions: auto allows everything, readonly allows reading and searching (no edits, no shell), agent (default) keeps the agent's own rules; rules (opencode.json's permission shape, the last match wins) replace the preset.",
    `checks are commands that must exit 0 after the turn: failures go back to the agent, up to max_rounds rounds (default ${DEFAULT_MAX_ROUNDS}). fallback_models take over when the model keeps failing.`,
  ],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  input,
  output: turnOutput,
  async run(args, ctx) {
    const conductor = await ctx.conductor(args.session_id);
    // Where it runs (here, a private instance, the fleet's queue) and a repeated request_id are the core's to decide.
    const r = await conductor.delegate({ ...taskOptions(args), ...waitOptions(ctx, conductor, args) });
    const answer = taskAnswer(r, args.request_id);
    await afterCancel(ctx, conductor, [answer.data.session_id], args.interrupt_on_cancel);
    return answer;
  },
  // As an MCP task: the same start, answered once its session exists; approvals wait for tasks/update
  // (or oc_answer, or the console), and the wait is the task's own, not this call's.
  async task(args, ctx) {
    const conductor = await ctx.conductor(args.session_id);
    return conductor.delegations.delegate({
      ...taskOptions(args),
      timeoutMs: args.timeout_s === undefined ? undefined : timeoutMs(args.timeout_s),
      detail: args.detail,
    });
  },
  // After an approval round: the same session's turn, then the task's checks (nothing new starts).
  async resume(args, ctx, sessions) {
    const sessionId = sessions[0];
    if (!sessionId) throw new Error("The approval round named no session to go on with.");
    const conductor = await ctx.conductor(sessionId);
    const result = await conductor.resume(sessionId, {
      ...waitOptions(ctx, conductor, args),
      checks: args.checks,
      maxRounds: args.max_rounds,
      checkTimeoutMs: args.check_timeout_s === undefined ? undefined : args.check_timeout_s * 1000,
      model: args.model,
      agent: args.agent,
      guard: args.guard,
    });
    await afterCancel(ctx, conductor, [sessionId], args.interrupt_on_cancel);
    return taskAnswer(result);
  },
});
