// How the core's one result type (core/placement/result.ts) is shown to an MCP client, wherever
// the work ran: a turn here or on a private instance, or a task on the fleet's queue (then
// `session_id` is the task id, what oc_wait, oc_result and oc_interrupt take on any MCP server of
// the fleet, and `task` says where it ran: the worker, its session, every attempt), a batch, and a
// replayed start. The tools only pass the core's answer through these.
import type { SessionState } from "../core/control.js";
import type { FollowedResult } from "../core/placement/follow-ups.js";
import type { PlacedBatch, PlacedResult } from "../core/placement/result.js";
import type { ParallelResult } from "../core/parallel.js";
import { attemptsLine, type TaskView } from "../core/queue/outcome.js";
import type { TurnSummary } from "../core/turns/summary.js";
import type { WorktreeReport } from "../core/worktrees/task.js";
import { turnData, turnText, type TurnData } from "./turn-answer.js";

export function taskData(t: TaskView) {
  return {
    id: t.id,
    state: t.state,
    queue: t.queue,
    ...(t.worker ? { worker: t.worker, host: t.host } : {}),
    ...(t.attempts.at(-1)?.sessionId ? { session_id: t.attempts.at(-1)!.sessionId } : {}),
    attempts: t.attempts.map((a) => ({
      n: a.n,
      worker: a.worker,
      host: a.host,
      outcome: a.outcome,
      ...(a.sessionId ? { session_id: a.sessionId } : {}),
      ...(a.server ? { server: a.server } : {}),
      ...(a.reattach ? { reattached_to: a.reattach.of } : {}),
      ...(a.rerun ? { rerun: a.rerun } : {}),
      started_at: a.startedAt,
      ...(a.endedAt ? { ended_at: a.endedAt } : {}),
      ...(a.reason ? { reason: a.reason } : {}),
    })),
    ...(t.repo
      ? {
          repo: {
            url: t.repo.url,
            base: t.repo.base,
            files: t.repo.files,
            patch: t.repo.patch,
            ...(t.repo.branch ? { branch: t.repo.branch, pushed: t.repo.pushed === true } : {}),
            ...(t.repo.pushError ? { push_error: t.repo.pushError } : {}),
          },
        }
      : {}),
  };
}

type TaskData = ReturnType<typeof taskData>;
type WorktreeData = ReturnType<typeof worktreeData>;
export type PlacedData = TurnData & { task?: TaskData; isolation?: string; attach?: string; worktree?: WorktreeData };

/** A worktree task's report: where it runs, then its branch and what it holds. */
export function worktreeData(w: WorktreeReport) {
  const setup = w.setup && { command: w.setup.command, exit: w.setup.exit };
  if (w.state !== "finished") return { state: w.state, base: w.base, path: w.path, port: w.port, ...(setup ? { setup } : {}) };
  return {
    state: w.state,
    ...(w.branch ? { branch: w.branch } : {}),
    base: w.base,
    head: w.head,
    changed: w.changed,
    files: w.files,
    patch: w.patch,
    ...(w.patchTruncated ? { patch_truncated: true } : {}),
    path: w.path,
    port: w.port,
    ...(setup ? { setup } : {}),
  };
}

/** One task's data: the turn, and where it ran. */
export function placedData(r: PlacedResult<TurnSummary>): PlacedData {
  if (r.task) return { ...turnData({ ...r, sessionId: r.task.id }), task: taskData(r.task) };
  if (r.worktree) return { ...turnData(r), isolation: "worktree", ...(r.attach ? { attach: r.attach } : {}), worktree: worktreeData(r.worktree) };
  return { ...turnData(r), ...(r.attach ? { isolation: "instance", attach: r.attach } : {}) };
}

/** A patch this short is shown in the text too; a longer one is in `worktree.patch` and the patch resource. */
const PATCH_IN_TEXT = 4_000;

function worktreeLines(sessionId: string, w: WorktreeData): string {
  if (w.state !== "finished") return `Worktree ${w.path} (CONDUCTOR_PORT ${w.port}): its branch is made when the turn ends.`;
  if (!w.branch) return `Worktree: nothing changed, so no branch was made.`;
  const files = w.files.map((f) => (f.additions !== undefined ? `${f.path} (+${f.additions} -${f.deletions ?? 0})` : f.path)).join(", ");
  const lines = [
    `Worktree branch ${w.branch} (${w.base.slice(0, 12)}..${w.head.slice(0, 12)}): ${files}.`,
    `Bring it back: oc_session {"action":"merge","session_id":"${sessionId}"} (into your current branch; "into" names another; "also" merges more tasks after it).`,
  ];
  if (w.patch.length <= PATCH_IN_TEXT && !w.patch_truncated) lines.push("", w.patch.trimEnd());
  else lines.push(`The whole patch: resource opencode://session/${sessionId}/patch.`);
  return lines.join("\n");
}

function taskLines(t: TaskData): string {
  const where = t.worker ? ` on worker ${t.worker} (${t.host})${t.session_id ? `, its session ${t.session_id}` : ""}` : "";
  const gone = t.attempts.filter((a) => a.outcome === "unreachable");
  const lines = [
    `Task ${t.id} ${t.state}${where}; ${attemptsLine(t.attempts.map((a) => ({ n: a.n, worker: a.worker, host: a.host, startedAt: a.started_at, outcome: a.outcome, sessionId: a.session_id })))}.`,
  ];
  for (const a of gone) lines.push(`Attempt ${a.n}'s worker stopped answering: ${a.reason ?? "its outcome is unknown"}.`);
  for (const a of t.attempts) if (a.rerun) lines.push(`Attempt ${a.n} ran the task again: ${a.rerun}.`);
  if (t.repo)
    lines.push(
      `Repo ${t.repo.url} @ ${t.repo.base.slice(0, 12)}: ${t.repo.files.length} files changed${t.repo.branch ? `; branch ${t.repo.branch} ${t.repo.pushed ? "pushed" : `NOT pushed (${t.repo.push_error ?? "no changes"})`}` : ""} (patch in task.repo.patch).`,
    );
  return lines.join("\n");
}

export function placedText(d: PlacedData): string {
  if (d.task) return `${turnText(d)}\n${taskLines(d.task)}`;
  if (d.worktree) return `${turnText(d)}\n${worktreeLines(d.session_id, d.worktree)}`;
  return `${turnText(d)}${d.attach ? `\nWatch it live: ${d.attach}` : ""}`;
}

function replayedLine(requestId: string | undefined, what: string): string {
  return `REPLAYED request_id ${requestId}: the first call's ${what}, nothing new was started.`;
}

/** oc_delegate's answer (and any one task's). */
export function taskAnswer(r: PlacedResult<TurnSummary>, requestId?: string) {
  const data = { ...placedData(r), ...(r.replayed ? { replayed: true } : {}) };
  return { text: `${r.replayed ? `${replayedLine(requestId, "session")}\n` : ""}${placedText(data)}`, data };
}

/** A batch result row. */
export function batchRow(r: ParallelResult) {
  const placed = r as ParallelResult & PlacedResult<TurnSummary>;
  if (placed.task || r.sessionId) return { index: r.index, ...placedData(placed) };
  return { index: r.index, status: r.status, answer: "", error: r.error };
}

function countsText(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([k, v]) => `${v} ${k}`)
    .join(", ");
}

/** oc_delegate_parallel's answer: a batch here, or one on the fleet (`batchId`, its rows tasks). */
export function batchAnswer(batch: PlacedBatch, requestId?: string) {
  const results = batch.results.map(batchRow);
  const replayed = batch.replayed ? [replayedLine(requestId, "sessions")] : [];
  // A budget covers the whole batch, here or on the fleet (there, the total its workers kept in Redis).
  const spent = batch.budget
    ? ` · budget ${batch.budget.tokens} tokens, $${batch.budget.cost.toFixed(4)}${batch.budget.exceeded ? " (exceeded: stopped)" : ""}`
    : "";
  const budget = batch.budget && {
    tokens: batch.budget.tokens,
    cost: batch.budget.cost,
    exceeded: batch.budget.exceeded,
    max_tokens: batch.budget.maxTokens,
    max_cost_usd: batch.budget.maxCostUsd,
  };
  if (batch.batchId !== undefined) {
    const text = [
      ...replayed,
      `Batch ${batch.batchId}: ${batch.results.length} tasks: ${countsText(batch.counts)}${spent}${batch.running.length ? ` (oc_wait {"session_id":"${batch.batchId}"} waits for the rest)` : ""}`,
      ...results.map(
        (r) =>
          `\n[${r.index + 1}] ${"task" in r && r.task ? `${r.status.toUpperCase()} · task ${r.task.id}${r.task.worker ? ` on ${r.task.worker}` : ""}${r.task.attempts.length > 1 ? ` · ${r.task.attempts.length} attempts` : ""}${r.answer ? `\n${r.answer}` : ""}${r.error ? `\nError: ${r.error.name}: ${r.error.message}` : ""}` : `${r.status.toUpperCase()}: ${r.error?.message ?? ""}`}`,
      ),
    ].join("\n");
    return {
      text,
      data: {
        batch_id: batch.batchId,
        results,
        counts: batch.counts,
        running: batch.running,
        ...(budget ? { budget } : {}),
        ...(batch.replayed ? { replayed: true } : {}),
      },
    };
  }
  const text = [
    ...replayed,
    `${batch.results.length} tasks: ${countsText(batch.counts)}${spent}`,
    ...results.map(
      (r) => `\n[${r.index + 1}] ${"session_id" in r && r.session_id ? placedText(r as PlacedData) : `${r.status.toUpperCase()}: ${r.error?.message ?? ""}`}`,
    ),
  ].join("\n");
  return {
    text,
    data: { results, counts: batch.counts, running: batch.running, ...(budget ? { budget } : {}), ...(batch.replayed ? { replayed: true } : {}) },
  };
}

/** oc_wait's answer: a turn, a task, or a whole fleet batch as one turn (`session_id` the batch id). */
export function followedAnswer(r: FollowedResult) {
  if (!r.batch) return taskAnswer(r);
  const batch = batchAnswer(r.batch);
  return { text: batch.text, data: { session_id: r.sessionId, status: r.status, answer: "", ...batch.data } };
}

/** oc_result's answer: the session's (or task's) state now and its last turn. */
export function stateAnswer(r: SessionState & { last: PlacedResult<TurnSummary> }) {
  const { text, data } = taskAnswer(r.last);
  if (r.last.task) return { text: `Task is ${r.last.task.state}.\n${text}`, data: { state: r.state, ...data } };
  const retry = r.retry ? ` (model retry ${r.retry.attempt}: ${r.retry.message})` : "";
  const now = r.state === "unreachable" ? "opencode does not answer: the session's state is unknown" : `Session is ${r.state}${retry}`;
  return {
    text: `${now}.\n${text}`,
    data: { state: r.state, ...(r.retry ? { retry: { attempt: r.retry.attempt, message: r.retry.message, next_at: r.retry.nextAt } } : {}), ...data },
  };
}

/** oc_interrupt's answer. */
export function stoppedAnswer(r: FollowedResult & { wasRunning: boolean }) {
  const { text, data } = followedAnswer(r);
  const said = r.wasRunning ? "Interrupted." : r.task?.state === "cancelled" ? "Cancelled before it started." : "Nothing was running.";
  return { text: `${said}\n${text}`, data: { was_running: r.wasRunning, ...data } };
}
