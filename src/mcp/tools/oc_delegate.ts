import { z } from "zod";
import { afterCancel, detailField, directoryField, interruptOnCancelField, progressTo, timeoutField, timeoutMs } from "../common.js";
import { defineTool } from "../tool.js";
import { turnData, turnOutput, turnText } from "../turn-answer.js";

export const ruleField = z.object({
  permission: z.string().describe("bash, edit, read, webfetch, external_directory, … or *"),
  pattern: z.string().describe("What it applies to, e.g. `git push*` or *"),
  action: z.enum(["allow", "deny", "ask"]),
});

export const ocDelegate = defineTool({
  name: "oc_delegate",
  title: "Delegate a task to an opencode agent",
  description:
    "Hand one coding task to an opencode agent that reads, edits and runs code in a project directory. " +
    "Starts a new session, or continues `session_id` (with `fork: true`, continues a copy). Waits for the agent and returns its answer, tool calls, files changed, tokens and cost. " +
    'If the work outlasts `timeout_s`, answers status "running" with the session id: call oc_wait. Status "blocked" means the agent waits for a permission or question: answer with oc_answer, then oc_wait.',
  toolset: "delegate",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  input: {
    task: z.string().min(1).describe("What the agent should do, in words (with `command`: the command's arguments)"),
    directory: directoryField,
    session_id: z.string().optional().describe("Continue this session instead of starting a new one"),
    fork: z.boolean().optional().describe("With session_id: fork the session first and continue the copy"),
    title: z.string().optional(),
    model: z.string().optional().describe("provider/model, provider/model#variant, or a name like sonnet (see oc_models)"),
    agent: z.string().optional().describe("Primary agent, e.g. build or plan (see oc_catalog agents)"),
    agents: z.array(z.string()).optional().describe("Sub-agents the agent may hand work to"),
    files: z.array(z.string()).optional().describe("Files to attach (paths)"),
    command: z.string().optional().describe("Run this slash command (without /) with `task` as its arguments"),
    permissions: z
      .enum(["auto", "readonly", "agent"])
      .optional()
      .describe("auto: everything allowed; readonly: no edits or shell; agent (default): the agent's own rules, where an ask blocks until oc_answer"),
    rules: z.array(ruleField).optional().describe("Explicit permission rules instead of a preset (last match wins)"),
    wait: z.boolean().optional().describe('Default true. false: start and answer "running" at once'),
    timeout_s: timeoutField,
    detail: detailField,
    interrupt_on_cancel: interruptOnCancelField,
  },
  output: turnOutput,
  async run(args, ctx) {
    const conductor = await ctx.conductor();
    const result = await conductor.delegate({
      task: args.task,
      directory: args.directory,
      sessionId: args.session_id,
      fork: args.fork,
      title: args.title,
      model: args.model,
      agent: args.agent,
      agents: args.agents,
      files: args.files,
      command: args.command,
      permissions: args.rules ?? args.permissions,
      wait: args.wait,
      timeoutMs: timeoutMs(args.timeout_s),
      detail: args.detail,
      signal: ctx.signal,
      onProgress: progressTo(ctx),
    });
    await afterCancel(ctx, conductor, [result.sessionId], args.interrupt_on_cancel);
    const data = turnData(result);
    return { text: turnText(data), data };
  },
});
