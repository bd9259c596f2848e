// The console's workflow runs: the list and one run, read from the run stores where the MCP
// servers keep them (the state dir's files, and with a queue configured the fleet's Redis, where
// every MCP server with OPENCODE_CONDUCTOR_QUEUE keeps its runs), and the answer to a pending
// sign-off. The answer goes through the workflows api's own `answer`, the one an approval step waits
// on, so the run walks on from this process as the MCP server that stopped at the sign-off would
// (a Conductor on the run's opencode server and the state dir; for a run kept in Redis, one with
// the fleet's queue, so its next agent steps are jobs for the workers), and the audit says the
// console answered. Every Redis read is bounded (fleet-runs.ts): an outage is said, never waited out.
import type { ServerResponse } from "node:http";
import { Conductor } from "../core/conductor.js";
import { UsageError } from "../core/errors.js";
import type { QueueSettings } from "../core/queue/settings.js";
import { workflowsApi } from "../core/workflows/api.js";
import { runCost, type WorkflowRun } from "../core/workflows/run-record.js";
import { RunStore } from "../core/workflows/run-store.js";
import { BadRequest, type ApiContext } from "./api.js";
import { RedisFailure, findRun, fleetRuns, fleetServerOf, onRedis, type KeptRun } from "./fleet-runs.js";

const RUN_ID = /^wfr_[A-Za-z0-9_-]{1,64}$/;
const LISTED = 100;

/** Runs newest first (the fleet's Redis and the state dir together), each with what the list shows and its store. */
export async function workflowRuns(ctx: ApiContext, res: ServerResponse): Promise<void> {
  const [fleet, local] = await Promise.all([fleetRuns(ctx, LISTED), new RunStore(ctx.stateDir).list(LISTED)]);
  const seen = new Set<string>();
  const rows = [...(fleet.runs ?? []).map((run) => ({ run, store: "redis" as const })), ...local.map((run) => ({ run, store: "state_dir" as const }))]
    .filter(({ run }) => !seen.has(run.id) && seen.add(run.id))
    .sort((a, b) => b.run.createdAt.localeCompare(a.run.createdAt))
    .slice(0, LISTED);
  ctx.json(res, 200, {
    runs: rows.map(({ run: r, store }) => ({
      id: r.id,
      workflow: r.workflow.name,
      status: r.status,
      step: r.workflow.steps[r.cursor]?.name,
      cost: runCost(r),
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      store,
      ...(r.end?.reason ? { reason: r.end.reason } : {}),
    })),
    stores: [...(ctx.fleet ? ["redis"] : []), "state_dir"],
    // The state dir's runs are still listed; the page says the fleet's could not be read.
    ...(fleet.error ? { redis_error: fleet.error } : {}),
  });
}

/** One run's record as its store holds it, which store that is, and its cost added up. */
export async function workflowRun(ctx: ApiContext, res: ServerResponse, id: string): Promise<void> {
  let found: KeptRun | undefined;
  try {
    found = RUN_ID.test(id) ? await findRun(ctx, id) : undefined;
  } catch (error) {
    if (error instanceof RedisFailure) return ctx.json(res, 503, { error: error.message });
    throw error;
  }
  if (!found) return ctx.json(res, 404, { error: `no workflow run ${id.slice(0, 80)} in ${storesSaid(ctx)}` });
  ctx.json(res, 200, { run: found.run, store: found.store, cost: runCost(found.run) });
}

/** Conductors that walk runs answered here: one per opencode server and store, so a run has one walker. */
export class RunWalkers {
  private readonly conductors = new Map<string, Conductor>();

  constructor(
    private readonly stateDir: string,
    private readonly access: (url: string) => { password?: string; username?: string },
  ) {}

  /** `fleet`: a run kept in Redis, walked with the fleet's queue (its agent steps are jobs), on `fleet.access`. */
  get(url: string, directory: string | undefined, fleet?: { queue: QueueSettings; access?: { password?: string; username?: string } }): Conductor {
    const key = `${fleet ? "redis" : "state_dir"}\n${url}\n${directory ?? ""}`;
    let conductor = this.conductors.get(key);
    if (!conductor) {
      const { password, username } = fleet?.access?.password ? fleet.access : this.access(url);
      conductor = new Conductor({
        url,
        queue: fleet?.queue ?? false,
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
  let answered: WorkflowRun;
  let found: KeptRun | undefined;
  try {
    found = await findRun(ctx, id);
    if (!found) return ctx.json(res, 404, { error: `no workflow run ${id.slice(0, 80)} in ${storesSaid(ctx)}` });
    const walker = found.store === "redis" ? await fleetWalker(ctx, walkers, found.run) : localWalker(ctx, walkers, found.run);
    if (!walker) return ctx.json(res, 409, { error: "the console follows no opencode server of this run: its steps' sessions are not in the task records" });
    const api = workflowsApi(walker, { audit: ctx.auditPath ?? false });
    // The api's refusal (no sign-off waits, answered already) is a 409 wherever the run is kept,
    // not a Redis failure: it is taken out before the bound says what failed on Redis.
    const answer = api.answer(id, { approve: body.decision === "approve", by: "console", ...(comment ? { comment } : {}) }).then(
      (run) => ({ run }),
      (error: unknown) => {
        if (error instanceof UsageError) return { refused: error };
        throw error;
      },
    );
    const outcome =
      found.store === "redis"
        ? await onRedis(ctx, answer, "while recording the sign-off (it may yet be recorded once Redis answers: read the run again)")
        : await answer;
    if ("refused" in outcome) return ctx.json(res, 409, { error: outcome.refused.message });
    answered = outcome.run;
  } catch (error) {
    if (error instanceof RedisFailure) return ctx.json(res, 503, { error: error.message });
    if (error instanceof UsageError) return ctx.json(res, 409, { error: error.message });
    throw error;
  }
  const { run, store } = found!;
  await ctx.audit.append({
    tool: "console",
    by: "human (console)",
    decision: body.decision,
    outcome: "ok",
    ...(run.directory ? { directory: run.directory } : {}),
    detail: { run: id, workflow: run.workflow.name, step: run.workflow.steps[run.cursor]?.name, store, ...(comment ? { comment } : {}) },
  });
  ctx.json(res, 200, { ok: true, status: answered.status, store });
}

/** A state dir run's walker: on the opencode server its sessions ran on, with the state dir. */
function localWalker(ctx: ApiContext, walkers: RunWalkers, run: WorkflowRun): Conductor | undefined {
  const url = serverOf(ctx, run);
  return url ? walkers.get(url, run.directory) : undefined;
}

/**
 * A Redis run's walker: a Conductor with the fleet's queue, on the server of the fleet its steps'
 * sessions ran on (any server of the fleet when none has run yet), its connection to Redis checked
 * first, so an outage is a RedisFailure here and not taken for the api's refusal.
 */
async function fleetWalker(ctx: ApiContext, walkers: RunWalkers, run: WorkflowRun): Promise<Conductor | undefined> {
  const fleet = ctx.fleet!;
  const server = await fleetServerOf(ctx, run);
  const url = server?.url ?? serverOf(ctx, run);
  if (!url) return undefined;
  const walker = walkers.get(url, run.directory, { queue: fleet.settings, ...(server ? { access: server } : {}) });
  await onRedis(
    ctx,
    walker.taskQueue()!.then((q) => q.reachable()),
    "from the walker of the run",
  );
  return walker;
}

function storesSaid(ctx: ApiContext): string {
  return ctx.fleet ? "the fleet's Redis or the state dir" : "the state dir";
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
