// What the console knows about tasks, pending requests and servers, built from the state dir's task
// records and the live events of each opencode server. Every change is announced to listeners (the
// browser streams), as the changed row, never as a full reload.
import type { PendingRequest } from "../core/model/pending-request.js";
import type { LivePart } from "../core/engine/live-parts.js";
import type { TaskRecord, TaskStart } from "../core/governance/task-records.js";
import type { MergeRecord, WorktreeRow } from "../core/worktrees/registry.js";

/** A stretch of a task's life in one state, for the timeline. `to` undefined: still in it. */
export interface Segment {
  state: "running" | "retry" | "blocked";
  from: number;
  to?: number;
}

export interface TaskView extends Pick<
  TaskStart,
  "batch_id" | "index" | "tool" | "pid" | "server" | "isolation" | "directory" | "title" | "task" | "agent" | "budget"
> {
  id: string;
  /** The model asked for, then the one the tool reported. */
  model?: string;
  fallbacks_configured: string[];
  fallbacks: Array<{ from: string; to: string; reason: string; at: string }>;
  checks_configured: string[];
  checks?: Array<{ round: number; command: string; passed: boolean; exit: number | null }>;
  started_at: number;
  ended_at?: number;
  /** The tools' statuses: done, error, blocked, running, interrupted, lost, unreachable, checks_failed, budget_exceeded. */
  status: string;
  /** Where this status comes from: the MCP call's answer, or opencode read by the console. */
  status_from: "tool" | "opencode" | "start";
  /** opencode's session status as last seen (busy, retry, idle). */
  live?: string;
  retry?: { attempt: number; message: string };
  tokens?: number;
  cost?: number;
  files: string[];
  error?: string;
  segments: Segment[];
  /** Times approvals were asked. */
  approvals: number[];
  /** A worktree task's checkout, branch and merge state (from the worktree registry). */
  worktree?: WorktreeView;
}

export interface WorktreeView {
  /** creating, running or finished (its work committed). */
  state: WorktreeRow["state"];
  branch?: string;
  base: string;
  head?: string;
  changed?: boolean;
  path: string;
  port: number;
  /** The checkout was removed (TTL); the branch stays. */
  checkout_removed: boolean;
  merge?: MergeRecord;
}

/** `task_id`: a request in a worker's session on the fleet (its task on the queue). */
export type PendingView = PendingRequest & { server: string; directory?: string; asked_at: number; task_id?: string };

/** The console reads this task's status from opencode: no tool answered it, or the answer left the outcome unknown (`unreachable`). */
export function followed(task: TaskView): boolean {
  return task.status_from !== "tool" || task.status === "unreachable";
}

export type Change =
  | { type: "task"; task: TaskView }
  | { type: "pending"; pending: PendingView[] }
  | { type: "servers" }
  | { type: "audit" }
  | { type: "health" }
  | { type: "part"; live: LivePart };

export class Store {
  readonly tasks = new Map<string, TaskView>();
  readonly pending = new Map<string, PendingView>();
  /** The worktree registry's rows by session, kept for tasks whose record comes later. */
  private worktreeRows = new Map<string, WorktreeView>();
  private readonly listeners = new Set<(change: Change) => void>();

  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(change: Change): void {
    for (const listener of this.listeners) listener(change);
  }

  /** Applies a line of tasks.jsonl. */
  record(r: TaskRecord): void {
    if (r.event === "start") {
      const at = Date.parse(r.time);
      const existing = this.tasks.get(r.session_id);
      const task: TaskView = {
        ...(existing ?? {
          status: "running",
          status_from: "start" as const,
          files: [],
          fallbacks: [],
          segments: [{ state: "running" as const, from: at }],
          approvals: [],
        }),
        id: r.session_id,
        batch_id: r.batch_id,
        index: r.index,
        tool: r.tool,
        pid: r.pid,
        server: existing?.server ?? r.server,
        isolation: r.isolation,
        directory: r.directory,
        title: r.title,
        task: r.task,
        agent: r.agent,
        model: existing?.model ?? r.model,
        fallbacks_configured: r.fallbacks ?? [],
        budget: r.budget,
        checks_configured: r.checks ?? [],
        started_at: existing?.started_at ?? at,
        worktree: existing?.worktree ?? this.worktreeRows.get(r.session_id),
      };
      this.put(task);
      return;
    }
    const task = this.tasks.get(r.session_id);
    if (!task) return;
    // running/blocked answers are not an end: the work goes on and the console keeps following it.
    if (r.status === "running" || r.status === "blocked") return;
    // Nor is unreachable (opencode did not answer the tool): shown, and replaced by what opencode records once it answers.
    if (r.status === "unreachable") return this.put({ ...task, status: r.status, status_from: "tool", error: r.error });
    const at = Date.parse(r.time);
    this.put({
      ...task,
      status: r.status,
      status_from: "tool",
      ended_at: at,
      model: r.model ?? task.model,
      tokens: r.tokens ?? task.tokens,
      cost: r.cost ?? task.cost,
      files: r.files ?? task.files,
      error: r.error,
      fallbacks: r.fallbacks ?? task.fallbacks,
      checks: r.checks ?? task.checks,
      segments: closeSegments(task.segments, at),
    });
  }

  /** The worktree registry changed: each worktree task's view follows its row (a removed row: no worktree any more). */
  worktrees(rows: WorktreeRow[]): void {
    const next = new Map(rows.flatMap((r) => (r.sessionId ? [[r.sessionId, worktreeView(r)] as const] : [])));
    const ids = new Set([...this.worktreeRows.keys(), ...next.keys()]);
    this.worktreeRows = next;
    for (const id of ids) {
      const task = this.tasks.get(id);
      const view = next.get(id);
      if (task && JSON.stringify(task.worktree) !== JSON.stringify(view)) this.put({ ...task, worktree: view });
    }
  }

  /** The task runs on another server than its record says (a private instance, found in the registry). */
  relocate(sessionId: string, server: string): void {
    const task = this.tasks.get(sessionId);
    if (task && task.server !== server) this.put({ ...task, server });
  }

  /** opencode's session status changed (busy, retry, idle). */
  live(sessionId: string, status: { type: string; attempt?: number; message?: string }, at = Date.now()): void {
    const task = this.tasks.get(sessionId);
    if (!task) return;
    const retry = status.type === "retry" ? { attempt: status.attempt ?? 0, message: status.message ?? "" } : undefined;
    let segments = task.segments;
    if (task.ended_at === undefined && status.type !== "idle") {
      const blocked = [...this.pending.values()].some((p) => p.sessionId === sessionId);
      segments = enter(segments, blocked ? "blocked" : status.type === "retry" ? "retry" : "running", at);
    }
    const reopened = task.ended_at !== undefined && status.type === "busy";
    this.put({
      ...task,
      live: status.type,
      retry,
      segments,
      ...(reopened ? { ended_at: undefined, status: "running", status_from: "opencode" as const, segments: enter(task.segments, "running", at) } : {}),
      ...(task.ended_at === undefined && status.type !== "idle" && followed(task)
        ? { status: this.blockedNow(sessionId) ? "blocked" : "running", status_from: "opencode" as const }
        : {}),
    });
  }

  /** The status opencode recorded for a task whose MCP call has not answered (or whose caller is gone). */
  settled(sessionId: string, s: { status: string; tokens?: number; cost?: number; files?: string[]; error?: string; model?: string }, at = Date.now()): void {
    const task = this.tasks.get(sessionId);
    if (!task || !followed(task)) return;
    const ended = s.status !== "running" && s.status !== "blocked" && s.status !== "unreachable";
    this.put({
      ...task,
      status: s.status,
      status_from: "opencode",
      tokens: s.tokens ?? task.tokens,
      cost: s.cost ?? task.cost,
      files: s.files ?? task.files,
      error: s.error,
      model: s.model ?? task.model,
      ...(ended ? { ended_at: task.ended_at ?? at, segments: closeSegments(task.segments, at) } : {}),
    });
  }

  asked(request: PendingView): void {
    this.pending.set(request.id, request);
    const task = this.tasks.get(request.sessionId);
    if (task)
      this.put({
        ...task,
        approvals: [...task.approvals, request.asked_at],
        ...(task.ended_at === undefined ? { status: "blocked", segments: enter(task.segments, "blocked", request.asked_at) } : {}),
      });
    this.emit({ type: "pending", pending: [...this.pending.values()] });
  }

  replied(requestId: string, at = Date.now()): void {
    const request = this.pending.get(requestId);
    if (!request) return;
    this.pending.delete(requestId);
    const task = this.tasks.get(request.sessionId);
    if (task && task.ended_at === undefined && !this.blockedNow(task.id))
      this.put({ ...task, status: "running", segments: enter(task.segments, "running", at) });
    this.emit({ type: "pending", pending: [...this.pending.values()] });
  }

  /** Replaces the pending requests of one server (after a reconnect, or at start). */
  resetPending(server: string, requests: PendingView[]): void {
    for (const [id, p] of this.pending) if (p.server === server && !requests.some((r) => r.id === id)) this.pending.delete(id);
    for (const r of requests) if (!this.pending.has(r.id)) this.asked(r);
    this.emit({ type: "pending", pending: [...this.pending.values()] });
  }

  private blockedNow(sessionId: string): boolean {
    return [...this.pending.values()].some((p) => p.sessionId === sessionId);
  }

  private put(task: TaskView): void {
    this.tasks.set(task.id, task);
    this.emit({ type: "task", task });
  }
}

function worktreeView(r: WorktreeRow): WorktreeView {
  return {
    state: r.state,
    ...(r.branch ? { branch: r.branch } : {}),
    base: r.base,
    ...(r.head ? { head: r.head } : {}),
    ...(r.changed !== undefined ? { changed: r.changed } : {}),
    path: r.path,
    port: r.port,
    checkout_removed: r.checkoutRemovedAt !== undefined,
    ...(r.merge ? { merge: r.merge } : {}),
  };
}

function enter(segments: Segment[], state: Segment["state"], at: number): Segment[] {
  const last = segments[segments.length - 1];
  if (last && last.to === undefined && last.state === state) return segments;
  const closed = last && last.to === undefined ? [...segments.slice(0, -1), { ...last, to: at }] : segments;
  return [...closed, { state, from: at }];
}

function closeSegments(segments: Segment[], at: number): Segment[] {
  const last = segments[segments.length - 1];
  return last && last.to === undefined ? [...segments.slice(0, -1), { ...last, to: Math.max(at, last.from) }] : segments;
}
