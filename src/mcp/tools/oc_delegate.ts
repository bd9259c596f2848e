import { z } from "zod";
import { afterCancel, detailField, directoryField, interruptOnCancelField, progressTo, timeoutField, timeoutMs } from "../common.js";
import { defineTool } from "../tool.js";
import { turnData, turnOutput, turnText } from "../turn-answer.js";

export const ruleField = z.object({
  permission: z.string().describe("e.g. bash, edit, *"),
  pattern: z.string().describe("e.g. git push*"),
  action: z.enum(["allow", "deny", "ask"]),
});

export const ocDelegate = defineTool({
  name: "oc_delegate",
  title: "Delegate a task to an opencode agent",
  description:
    "Hand a coding task to an opencode agent working in a project directory (new session, or continue/fork session_id). Returns its answer, tools used, files changed, tokens, cost. " +
    '"running": call oc_wait with session_id. "blocked": answer with oc_answer, then oc_wait.',
  toolset: "delegate",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  input: {
    task: z.string().min(1).describe("What to do (with command: its arguments)"),
    directory: directoryField,
    session_id: z.string().optional().describe("Continue this session"),
    fork: z.boolean().optional().describe("Continue a copy of session_id"),
    title: z.string().optional(),
    model: z.string().optional().describe("provider/model[#variant] or a name (oc_models)"),
    agent: z.string().optional().describe("e.g. build, plan"),
    agents: z.array(z.string()).optional().describe("Sub-agents it may use"),
    files: z.array(z.string()).optional().describe("Paths to attach"),
    command: z.string().optional().describe("Slash command to run (no /)"),
    permissions: z
      .enum(["auto", "readonly", "agent"])
      .optional()
      .describe("auto: all allowed; readonly: no edits/shell; agent (default): agent's rules, asks block"),
    rules: z.array(ruleField).optional().describe("Instead of a preset; last match wins"),
    wait: z.boolean().optional().describe("false: return at once"),
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
