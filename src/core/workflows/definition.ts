// What a workflow file says: named inputs and ordered steps of five kinds (agent, check, review,
// approval, deliver), as a zod schema. The file's own spelling is snake_case, like the MCP tools';
// parse.ts turns a YAML or JSON text into this shape and names the bad field and its line.
import { z } from "zod";

/** A step's name: how templates, `on_fail` and `of` refer to it. */
const stepName = z.string().regex(/^[a-z][a-z0-9_-]{0,62}$/, "a step name is lowercase letters, digits, - and _, starting with a letter");
const count = (max: number) => z.number().int().min(1).max(max);

const permissions = z.union([
  z.enum(["auto", "readonly", "agent"]),
  z.array(z.strictObject({ permission: z.string(), pattern: z.string(), action: z.enum(["allow", "deny", "ask"]) })),
  z.record(z.string(), z.union([z.enum(["allow", "deny", "ask"]), z.record(z.string(), z.enum(["allow", "deny", "ask"]))])),
]);

const agentFields = {
  /** What the agent is told; `{{inputs.x}}`, `{{steps.y.output}}` and, with `each`, `{{item}}` are filled in. */
  prompt: z.string().min(1),
  agent: z.string().optional(),
  model: z.string().optional(),
  fallback_models: z.array(z.string()).optional(),
  permissions: permissions.optional(),
  max_tokens: z.number().int().positive().optional(),
  max_cost_usd: z.number().positive().optional(),
};

const agentStep = z.strictObject({
  name: stepName,
  kind: z.literal("agent"),
  ...agentFields,
  /** Where it runs: `worktree` (a branch of its own, the default when a later step delivers it), `shared` (the project directory), or `instance`. */
  isolation: z.enum(["shared", "worktree", "instance"]).optional(),
  /** Fan out: one task per item of this input (a list, or a comma-separated string), at once. */
  each: z.string().optional(),
  timeout_s: z.number().positive().optional(),
});

const checkStep = z.strictObject({
  name: stepName,
  kind: z.literal("check"),
  /** Shell commands that must all exit 0, run one after the other in the checked step's directory. */
  run: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  /** The step whose work is checked (default: the last agent step before this one). */
  of: stepName.optional(),
  /** An earlier agent step that gets the failure to fix; without it a failure fails the run. */
  on_fail: stepName.optional(),
  /** How many times the check may send the run back (default 2). */
  max_retries: count(20).optional(),
  timeout_s: z.number().positive().optional(),
});

const reviewStep = z.strictObject({
  name: stepName,
  kind: z.literal("review"),
  /** The agent step whose diff is reviewed; requested changes go back to it. */
  of: stepName,
  /** What to look for (the conductor adds the diff and the answer format). */
  prompt: z.string().optional(),
  agent: z.string().optional(),
  model: z.string().optional(),
  /** Review rounds at most (default 2): a request for changes in the last one fails the run. */
  max_rounds: count(10).optional(),
  timeout_s: z.number().positive().optional(),
});

const approvalStep = z.strictObject({
  name: stepName,
  kind: z.literal("approval"),
  /** What the person signs off, shown with the run so far. */
  message: z.string().min(1),
});

const deliverStep = z.strictObject({
  name: stepName,
  kind: z.literal("deliver"),
  /** The agent step whose branch is delivered (it runs with isolation `worktree`). */
  of: stepName,
  /** Merge the branch into this branch of the repository. */
  merge_into: z.string().optional(),
  /** Or push it to this remote, as `branch` (default: the task's branch name). */
  push: z.strictObject({ remote: z.string().min(1), branch: z.string().optional() }).optional(),
});

export const STEP_KINDS = ["agent", "check", "review", "approval", "deliver"] as const;
export type StepKind = (typeof STEP_KINDS)[number];

export const stepSchema = z.discriminatedUnion("kind", [agentStep, checkStep, reviewStep, approvalStep, deliverStep]);

const inputSchema = z.strictObject({
  description: z.string().optional(),
  /** Used when the input is not given; an input without one must be given. */
  default: z.union([z.string(), z.array(z.string())]).optional(),
});

export const workflowSchema = z.strictObject({
  name: z.string().min(1).max(120),
  description: z.string().optional(),
  inputs: z.record(z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, "an input name is lowercase letters, digits and _"), inputSchema).default({}),
  steps: z.array(stepSchema).min(1),
});

export type Workflow = z.output<typeof workflowSchema>;
export type Step = z.output<typeof stepSchema>;
export type AgentStep = z.output<typeof agentStep>;
export type CheckStep = z.output<typeof checkStep>;
export type ReviewStep = z.output<typeof reviewStep>;
export type ApprovalStep = z.output<typeof approvalStep>;
export type DeliverStep = z.output<typeof deliverStep>;
/** An input's value: text, or a list (for `each`). */
export type InputValue = string | string[];

export const DEFAULT_CHECK_RETRIES = 2;
export const DEFAULT_REVIEW_ROUNDS = 2;
