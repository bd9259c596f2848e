import { z } from "zod";
import type { Conductor } from "../../core/conductor.js";
import { quoted, UsageError } from "../../core/errors.js";
import { clamped, directoryField, sessionIdField } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";
// Loaded by the worktree actions when called, not with the server.
const worktreeTasks = () => import("../../core/worktrees/task.js");

const ACTIONS = [
  "info",
  "messages",
  "diff",
  "fork",
  "compact",
  "rename",
  "archive",
  "delete",
  "abort",
  "revert",
  "unrevert",
  "shell",
  "export",
  "todo",
  "set_model",
  "set_agent",
  "merge",
  "remove_worktree",
] as const;
type Action = (typeof ACTIONS)[number];

interface Args {
  session_id: string;
  action: Action;
  title?: string;
  message_id?: string;
  part_id?: string;
  command?: string;
  model?: string;
  agent?: string;
  limit?: number;
  before?: string;
  directory?: string;
  into?: string;
  also?: string[];
}

function need<T>(value: T | undefined, name: string, action: Action): T {
  if (value === undefined || value === "") throw new UsageError(`action ${quoted(action)} needs \`${name}\`.`);
  return value;
}

const NEXT_TURNS = "Used for this session's next turns sent through this server (oc_delegate session_id, oc_send).";

// One line per action: the core does the work, the tool only maps arguments.
const ACTION_HANDLERS: Record<Action, (c: Conductor, a: Args) => Promise<unknown>> = {
  info: (c, a) => c.sessions.info(a.session_id, a),
  messages: (c, a) => c.sessions.messages(a.session_id, { ...a, limit: a.limit, before: a.before }),
  diff: (c, a) => c.sessions.diff(a.session_id, { ...a, messageId: a.message_id }),
  fork: (c, a) => c.sessions.fork(a.session_id, { ...a, messageId: a.message_id }),
  compact: (c, a) => c.sessions.compact(a.session_id, { ...a, model: a.model }),
  rename: (c, a) => c.sessions.rename(a.session_id, need(a.title, "title", a.action), a),
  archive: (c, a) => c.sessions.archive(a.session_id),
  delete: (c, a) => c.sessions.delete(a.session_id, a),
  abort: (c, a) => c.sessions.abort(a.session_id, a),
  revert: (c, a) => c.sessions.revert(a.session_id, { ...a, messageId: need(a.message_id, "message_id", a.action), partId: a.part_id }),
  unrevert: (c, a) => c.sessions.unrevert(a.session_id, a),
  shell: (c, a) => c.sessions.shell(a.session_id, { ...a, command: need(a.command, "command", a.action), agent: a.agent, model: a.model }),
  export: (c, a) => c.sessions.export(a.session_id, a),
  todo: (c, a) => c.sessions.todo(a.session_id, a),
  set_model: async (c, a) => ({ ...(await c.sessions.setModel(a.session_id, need(a.model, "model", a.action))), note: NEXT_TURNS }),
  set_agent: async (c, a) => ({ ...c.sessions.setAgent(a.session_id, need(a.agent, "agent", a.action)), note: NEXT_TURNS }),
  // isolation "worktree" tasks: their branches merged in order (session_id, then `also`), or removed.
  merge: async (c, a) => (await worktreeTasks()).mergeWorktreeTasks(c, [a.session_id, ...(a.also ?? [])], a.into),
  remove_worktree: async (c, a) => {
    const r = await (await worktreeTasks()).removeWorktreeTask(c, a.session_id);
    return { checkout_removed: r.checkoutRemoved, ...(r.branch ? { branch: r.branch, branch_result: r.branchResult } : {}) };
  },
};

/** The actions that can change the project's files or branches (a shell command, a revert and its undo, a worktree task's merge or removal). */
const FILE_ACTIONS = new Set<Action>(["revert", "unrevert", "shell", "merge", "remove_worktree"]);
const DESTRUCTIVE = new Set<Action>(["delete", "revert", "abort", "compact", "merge", "remove_worktree"]);
const MAX_TEXT = 8_000;

export const ocSession = defineTool({
  name: "oc_session",
  title: "Manage one session",
  description:
    "One action on a session: messages (limit, before), diff/fork/revert (message_id), rename (title), shell (command), set_model, set_agent; worktree tasks: merge (into, also: more ids), remove_worktree.",
  toolset: "sessions",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  audit: { detail: (args) => ({ action: args.action }), changesFiles: (args) => FILE_ACTIONS.has(args.action as Action) },
  input: {
    session_id: sessionIdField,
    action: z.enum(ACTIONS),
    title: z.string().optional(),
    message_id: z.string().optional(),
    part_id: z.string().optional(),
    command: z.string().optional(),
    model: z.string().optional(),
    agent: z.string().optional(),
    limit: clamped(1, 200, true).optional(),
    before: z.string().optional(),
    directory: directoryField,
    into: z.string().optional(),
    also: z.array(z.string()).optional(),
  },
  output: { result: z.unknown() },
  async run(args, ctx) {
    const conductor = await ctx.conductor(args.session_id);
    const result = await ACTION_HANDLERS[args.action](conductor, args);
    const json = JSON.stringify(result, null, 1);
    const shown =
      json.length > MAX_TEXT
        ? `${json.slice(0, MAX_TEXT)}\n… (truncated in text; the structured result has the rest, or a link to it when over the answer budget${args.action === "messages" ? ", or page with limit/before" : ""})`
        : json;
    const warn = DESTRUCTIVE.has(args.action) ? " (changes the session)" : "";
    return { text: `${args.action} ${args.session_id}${warn}:\n${shown}`, data: { session_id: args.session_id, action: args.action, result } };
  },
});
