// One task with `isolation: "worktree"`: its own worktree of the directory's repository (worktrees.ts)
// and its own private opencode server started in that worktree, with the task's CONDUCTOR_PORT in
// the server's environment. opencode gives the commands its agent runs the server's own environment
// (1.18.33: process.env plus what a loaded plugin's `shell.env` hook adds; the 2.x pre-release:
// process.env plus a plugin's `shell` `create.before` hook; 2.0.26 adds a per-session environment
// route, not in the pre-release), so a server of its own is how the port reaches the agent's
// commands without a plugin in the user's config; setup and checks get it directly. Like `isolation: "instance"`, it runs under
// the guard rails with a credential-free environment. When the turn ends the work is committed as
// the task's branch; a task still running when the call returns is committed when it ends.
import { join } from "node:path";
import type { CoreContext } from "../context.js";
import { delegate, type DelegateOptions, type DelegateResult } from "../delegate.js";
import { UsageError } from "../errors.js";
import type { Closable, InstanceLeases } from "../instances/leases.js";
import { existingDirectory } from "../inputs/directory.js";
import { guardedEnv } from "../policy/guard-rails.js";
import { permissionRules } from "../policy/permissions.js";
import { wait } from "../control.js";
import type { TurnSummary } from "../turns/summary.js";
import type { WorktreeRow } from "./registry.js";
import type { SetupRun } from "./setup.js";
import type { OpenWorktree, WorktreeFacts, Worktrees } from "./worktrees.js";

export interface WorktreeTaskOptions extends DelegateOptions {
  /** The commit to start from (branch, tag or sha). Default: the directory's HEAD. */
  base?: string;
  /** A shell command run in the worktree before the agent starts (e.g. `npm ci`); a failure ends the task. */
  setup?: string;
  setupTimeoutMs?: number;
}

/** A worktree task's place and, once its work is committed, what it changed. */
export type WorktreeReport =
  (WorktreeFacts & { state: "finished" }) | { state: "creating" | "running"; base: string; path: string; port: number; setup?: SetupRun };

export type WorktreeResult = DelegateResult & { isolation: "worktree"; worktree: WorktreeReport; attach?: string };

/** What a worktree task needs of the conductor running it. */
export interface WorktreeHost extends CoreContext {
  worktrees?: Worktrees;
  instances?: InstanceLeases<CoreContext & Closable>;
}

/** Commits of tasks that outlived their call, by session: a wait that sees the turn end can wait for the commit too. */
const settling = new Map<string, Promise<unknown>>();

export async function delegateInWorktree(host: WorktreeHost, o: WorktreeTaskOptions): Promise<WorktreeResult> {
  if (o.sessionId !== undefined || o.fork)
    throw new UsageError(
      'isolation "worktree" starts a new session in a new worktree: leave out sessionId (a worktree task\'s session is continued without isolation).',
    );
  const worktrees = host.worktrees;
  const leases = host.instances;
  if (!worktrees || !leases)
    throw new UsageError('isolation "worktree" needs private instances and a state dir: create the Conductor with `instances` (an InstanceManager).');
  if (leases.manager.sandboxed)
    throw new UsageError(
      'isolation "worktree" does not run in the srt sandbox (OPENCODE_CONDUCTOR_SANDBOX=srt hides the state dir that holds the worktrees): use isolation "instance", or run without the sandbox.',
    );
  const given = o.directory ?? host.engine.directory;
  if (!given) throw new UsageError('isolation "worktree" needs `directory`: a folder inside the git repository to work on.');
  const directory = await existingDirectory(given);
  const env = guardedEnv(process.env);
  const title = o.title ?? o.task.split("\n")[0]!.slice(0, 60);
  const open = await worktrees.open({ directory, base: o.base, setup: o.setup, setupTimeoutMs: o.setupTimeoutMs, env, title });
  let lease: Awaited<ReturnType<typeof leases.lease>>;
  try {
    // The worktree's server is the task's alone: on 2.x its rules go into that server's config.
    lease = await leases.lease(open.directory, { env: open.env, taskRules: permissionRules(o.permissions) });
  } catch (error) {
    await worktrees.discard(open.id).catch(() => undefined);
    throw error;
  }
  let sessionId: string | undefined;
  let attach: string | undefined;
  let result: DelegateResult;
  try {
    const { base: _base, setup: _setup, setupTimeoutMs: _timeout, ...task } = o;
    result = await delegate(lease.conductor, {
      ...task,
      directory: open.directory,
      permissions: lease.rules(permissionRules(o.permissions)),
      checkEnv: { ...(o.checkEnv ?? env), ...open.env },
      onSession: async (id) => {
        sessionId = id;
        await worktrees.started(open.id, id);
        attach = await lease.record({ id, title, model: o.model ?? "" });
        await o.onSession?.(id);
      },
    });
  } catch (error) {
    // No session: nothing was recorded, so nothing is kept. With one, its work is committed as it is.
    if (sessionId === undefined) await worktrees.discard(open.id).catch(() => undefined);
    else await worktrees.finish(open.id, { title, task: o.task }).catch(() => undefined);
    lease.release();
    await leases.manager.stop(open.directory).catch(() => undefined);
    throw error;
  }
  const done = (report: WorktreeReport): WorktreeResult => ({ ...result, isolation: "worktree", worktree: report, ...(attach ? { attach } : {}) });
  // The server was the task's alone: stopped once the work is committed (the session stays readable
  // by any server on the same data dir, where a continued turn then runs, without CONDUCTOR_PORT).
  const close = async () => {
    lease.release();
    await leases.manager.stop(open.directory).catch(() => undefined);
  };
  if (!ended(result)) {
    const later = settleLater(lease.conductor, result.sessionId, () => worktrees.finish(open.id, { title, task: o.task })).finally(close);
    settling.set(result.sessionId, later);
    void later.finally(() => settling.delete(result.sessionId));
    return done(runningReport(open));
  }
  try {
    return done({ state: "finished", ...(await worktrees.finish(open.id, { title, task: o.task })), ...(open.setup ? { setup: open.setup } : {}) });
  } finally {
    await close();
  }
}

/** The report of a session's worktree task, if it is one: after a commit still in progress here. */
export async function worktreeOf(host: WorktreeHost, sessionId: string): Promise<WorktreeReport | undefined> {
  if (!host.worktrees) return undefined;
  await settling.get(sessionId)?.catch(() => undefined);
  const row = await host.worktrees.registry.bySession(sessionId).catch(() => undefined);
  if (!row) return undefined;
  if (row.state !== "finished") return runningReport(row);
  return { state: "finished", ...(await host.worktrees.facts(row)) };
}

/** A summary with its worktree report, when its session is a worktree task. */
export async function withWorktree<T extends TurnSummary>(host: WorktreeHost, summary: T): Promise<T & { worktree?: WorktreeReport }> {
  const worktree = summary.sessionId ? await worktreeOf(host, summary.sessionId) : undefined;
  return worktree ? { ...summary, isolation: "worktree", worktree } : summary;
}

/** The worktree tasks of a conductor, or a clear refusal. */
function worktreesOf(host: WorktreeHost): Worktrees {
  if (!host.worktrees) throw new UsageError("This conductor keeps no worktree tasks: give it a state dir (`stateDir`) or private instances (`instances`).");
  return host.worktrees;
}

/** Merges worktree tasks' branches, in order, into `into` (default: the branch checked out where they started). */
export function mergeWorktreeTasks(host: WorktreeHost, sessionIds: string[], into?: string) {
  return worktreesOf(host).merge(sessionIds, into);
}

/** A worktree task's whole patch, base to head (cut at PATCH_MAX_CHARS). */
export function worktreePatch(host: WorktreeHost, sessionId: string) {
  return worktreesOf(host).patch(sessionId);
}

/** Removes a finished worktree task's checkout (stopping a server still in it) and its branch. */
export function removeWorktreeTask(host: WorktreeHost, sessionId: string) {
  return worktreesOf(host).remove(sessionId, (row) => host.instances?.manager.stop(row.subdir ? join(row.path, row.subdir) : row.path).then(() => undefined));
}

/** Waits for the turn to end (however long), then commits; also when the server went away meanwhile. */
async function settleLater(ctx: CoreContext, sessionId: string, finish: () => Promise<unknown>): Promise<void> {
  try {
    for (let summary = await wait(ctx, sessionId); !ended(summary);) summary = await wait(ctx, sessionId);
  } finally {
    await finish();
  }
}

function ended(summary: Pick<TurnSummary, "status">): boolean {
  return summary.status !== "running" && summary.status !== "blocked";
}

function runningReport(w: Pick<OpenWorktree, "base" | "path" | "port" | "setup"> | WorktreeRow): WorktreeReport {
  const state = "state" in w && w.state === "creating" ? "creating" : "running";
  return { state, base: w.base, path: w.path, port: w.port, ...("setup" in w && w.setup ? { setup: w.setup } : {}) };
}
