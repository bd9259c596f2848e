// The MCP answers of queued work (OPENCODE_CONDUCTOR_QUEUE): the same turn data as in-process
// work, where `session_id` is the task id (what oc_wait, oc_result and oc_interrupt take on any
// MCP server of the fleet) and `task` says where it ran: the worker, its session, every attempt.
import type { Conductor } from "../core/conductor.js";
import { UsageError } from "../core/errors.js";
import { attemptsLine, type QueuedSummary, type TaskView } from "../core/queue/outcome.js";
import type { ParallelResult } from "../core/parallel.js";
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

export function queuedData(r: QueuedSummary): TurnData & { task: ReturnType<typeof taskData> } {
  return { ...turnData({ ...r, sessionId: r.task.id }), task: taskData(r.task) };
}

export function queuedText(d: ReturnType<typeof queuedData>): string {
  const t = d.task;
  const where = t.worker ? ` on worker ${t.worker} (${t.host})${t.session_id ? `, its session ${t.session_id}` : ""}` : "";
  const lost = t.attempts.filter((a) => a.outcome === "lost");
  const lines = [
    `Task ${t.id} ${t.state}${where}; ${attemptsLine(t.attempts.map((a) => ({ n: a.n, worker: a.worker, host: a.host, startedAt: a.started_at, outcome: a.outcome, sessionId: a.session_id })))}.`,
  ];
  for (const a of lost) lines.push(`Attempt ${a.n} was lost: ${a.reason ?? "its worker died"}.`);
  if (t.repo)
    lines.push(
      `Repo ${t.repo.url} @ ${t.repo.base.slice(0, 12)}: ${t.repo.files.length} files changed${t.repo.branch ? `; branch ${t.repo.branch} ${t.repo.pushed ? "pushed" : `NOT pushed (${t.repo.push_error ?? "no changes"})`}` : ""} (patch in task.repo.patch).`,
    );
  return `${turnText(d)}\n${lines.join("\n")}`;
}

/** One task's answer. */
export function queuedAnswer(r: QueuedSummary) {
  const data = queuedData(r);
  return { text: queuedText(data), data };
}

/** A batch result row as oc_delegate_parallel shows it. */
export function queuedRow(r: ParallelResult) {
  if (!("task" in r)) return { index: r.index, status: r.status, answer: "", error: r.error };
  return { index: r.index, ...queuedData(r as unknown as QueuedSummary) };
}

/** Refuses what a queued task cannot do, before anything is queued. */
export function checkQueued(args: { isolation?: string; session_id?: string; approvals?: string }): void {
  if (args.isolation === "instance")
    throw new UsageError('isolation "instance" is not available for queued tasks: the worker runs every task under the guard rails already.');
}

/** The conductor's queue is configured and `id` is not an opencode session: a task or batch id. */
export function isQueued(conductor: Conductor, id: string | undefined): boolean {
  return conductor.queueSettings !== undefined && (id === undefined || !id.startsWith("ses_"));
}
