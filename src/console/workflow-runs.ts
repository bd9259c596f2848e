// The console's workflow runs: the list and one run, read from the run store in the state dir
// (the same files the MCP server's oc_workflow writes), and the answer to a pending sign-off. The
// answer goes through the workflows api's own `answer`, the one an approval step waits on, so the
// run walks on from this process (a Conductor on the run's opencode server and the state dir, as
// the MCP server that stopped at the sign-off would), and the audit says the console answered.
import type { ServerResponse } from "node:http";
import { Conductor } from "../core/conductor.js";
import { UsageError } from "../core/errors.js";
import { workflowsApi } from "../core/workflows/api.js";
import { runCost, type WorkflowRun } from "../core/workflows/run-record.js";
import { RunStore } from "../core/workflows/run-store.js";
import { BadRequest, type ApiContext } from "./api.js";

const RUN_ID = /^wfr_[A-Za-z0-9_-]{1,64}$/;

/** Runs newest first, each with what the list shows (the full record is one GET away). */
export async function workflowRuns(ctx: ApiContext, res: ServerResponse): Promise<void> {
  const runs = await new RunStore(ctx.stateDir).list(100);
  ctx.json(res, 200, {
    runs: runs.map((r) => ({
      id: r.id,
      workflow: r.workflow.name,
      status: r.status,
      step: r.workflow.steps[r.cursor]?.name,
      cost: runCost(r),
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      ...(r.end?.reason ? { reason: r.end.reason } : {}),
    })),
  });
}

/** One run's record as the state dir holds it, and its cost added up. */
export async function workflowRun(ctx: ApiContext, res: ServerResponse, id: string): Promise<void> {
  const run = RUN_ID.test(id) ? await new RunStore(ctx.stateDir).get(id) : undefined;
  if (!run) return ctx.json(res, 404, { error: `no workflow run ${id.slice(0, 80)} in the state dir` });
  ctx.json(res, 200, { run, cost: runCost(run) });
}

/** Conductors that walk runs answered here: one per opencode server, so a run has one walker. */
export class RunWalkers {
  private readonly conductors = new Map<string, Conductor>();

  constructor(
    private readonly stateDir: string,
    private readonly access: (url: string) => { password?: string; username?: string },
  ) {}

  get(url: string, directory: string | undefined): Conductor {
    const key = `${url}\n${directory ?? ""}`;
    let conductor = this.conductors.get(key);
    if (!conductor) {
      const { password, username } = this.access(url);
      conductor = new Conductor({
        url,
        queue: false,
        stateDir: this.stateDir,
        ...(directory ? { directory } : {}),
        ...(password ? { password, username } : {}),
      });
      this.conductors.set(key, conductor);
    }
    return conductor;
  }

  close(): void {
    for (const c of this.conductors.values()) c.close();
  }
}

/** Approve or reject the sign-off a run waits for; the run goes on (or fails) from here. */
export async function answerSignOff(ctx: ApiContext, walkers: RunWalkers, res: ServerResponse, id: string, body: Record<string, unknown>): Promise<void> {
  if (!RUN_ID.test(id)) throw new BadRequest("not a workflow run id");
  if (body.decision !== "approve" && body.decision !== "reject") throw new BadRequest('decision must be "approve" or "reject"');
  const comment = typeof body.comment === "string" && body.comment.trim() ? body.comment.trim().slice(0, 4_000) : undefined;
  const run = await new RunStore(ctx.stateDir).get(id);
  if (!run) return ctx.json(res, 404, { error: `no workflow run ${id.slice(0, 80)} in the state dir` });
  const url = serverOf(ctx, run);
  if (!url) return ctx.json(res, 409, { error: "the console follows no opencode server of this run: its steps' sessions are not in the task records" });
  const api = workflowsApi(walkers.get(url, run.directory), { audit: ctx.auditPath ?? false });
  let answered: WorkflowRun;
  try {
    answered = await api.answer(id, { approve: body.decision === "approve", by: "console", ...(comment ? { comment } : {}) });
  } catch (error) {
    if (error instanceof UsageError) return ctx.json(res, 409, { error: error.message });
    throw error;
  }
  await ctx.audit.append({
    tool: "console",
    by: "human (console)",
    decision: body.decision,
    outcome: "ok",
    ...(run.directory ? { directory: run.directory } : {}),
    detail: { run: id, workflow: run.workflow.name, step: run.workflow.steps[run.cursor]?.name, ...(comment ? { comment } : {}) },
  });
  ctx.json(res, 200, { ok: true, status: answered.status });
}

/**
 * The opencode server the run's sessions live on, by the task records: a session on the shared
 * server first (a worktree step's private instance may be gone by the sign-off).
 */
function serverOf(ctx: ApiContext, run: WorkflowRun): string | undefined {
  const tasks = run.steps
    .flatMap((s) => s.attempts.flatMap((a) => a.turns ?? []))
    .flatMap((t) => (t.sessionId ? [ctx.store.tasks.get(t.sessionId)] : []))
    .filter((t) => t !== undefined);
  const shared = tasks.find((t) => t.isolation !== "instance" && t.isolation !== "worktree");
  if (shared) return shared.server;
  const instances = new Set(ctx.servers.instanceRows().map((r) => r.url));
  return ctx.servers.list().find((s) => !instances.has(s.url))?.url ?? tasks[0]?.server;
}
