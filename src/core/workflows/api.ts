// `conductor.workflows`: start a workflow run, read it, wait for it to stop (a sign-off, or its
// end), answer its sign-off, resume it after a crash, cancel it, retry its failed step. Any process
// on the same state dir can do each of these: the run record says where the run is, and a run's
// agent steps are ledger delegations with a request id per attempt, so a resume re-attaches to a
// session still running instead of prompting again. With a queue (OPENCODE_CONDUCTOR_QUEUE) the
// records are in the fleet's Redis and the agent steps are jobs for its workers, so any process of
// the fleet, on any machine, can do each of these.
import { join } from "node:path";
import { sleep } from "../../client/sleep.js";
import { quoted, UsageError } from "../errors.js";
import { AuditLog } from "../governance/audit.js";
import { thisProcess } from "../ledger/record.js";
import { interruptAt } from "../placement/follow-ups.js";
import type { PlacementHost } from "../placement/host.js";
import type { InputValue, Workflow } from "./definition.js";
import { listWorkflows, resolveWorkflow, type FoundWorkflow } from "./files.js";
import { runInputs } from "./parse.js";
import { lastAttempt, newRunId, type SignOff, type WorkflowRun } from "./run-record.js";
import type { RunRecords } from "./run-records.js";
import { RunStore } from "./run-store.js";
import type { Worktrees } from "../worktrees/worktrees.js";
import { walk } from "./walk.js";
import { beating, walkerGone } from "./walker.js";
import { dropQueuedWalk, queueWalk, walkState } from "./walk-queue.js";
import type { QueueConnection } from "../queue/redis-connection.js";

export interface StartWorkflowOptions {
  /** A workflow's name (a file in the project's .opencode/workflows/) or a path. */
  workflow?: string;
  /** Or the workflow itself, as YAML or JSON text. */
  text?: string;
  inputs?: Record<string, InputValue>;
  /** The project directory (default: the conductor's). */
  directory?: string;
  /**
   * Walk the run on the fleet's queue (needs a queue): the walk is a job a worker takes
   * (`worker --walks N`), not this process, and so is every later walk of the run (an answered
   * sign-off, a resume, a retry). A worker that dies mid-walk has its walk handed to another.
   */
  detach?: boolean;
}

export interface WaitRunOptions {
  /** Answer the run as it is after this long, even if it still walks (default: until it stops). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** A detached run: answer it as it stands once its walk job has waited this long for a worker (default 60 s). */
  walkPickupMs?: number;
}

export interface WorkflowsApi {
  /** The project's workflows (.opencode/workflows/*.yaml|yml|json), each parsed or with its error. */
  list(directory?: string): Promise<FoundWorkflow[]>;
  /** Runs in the state dir, newest first. */
  runs(limit?: number): Promise<WorkflowRun[]>;
  /** Checks the workflow and its inputs (refused before anything runs), records the run, and walks it; resolves with the record as created. */
  start(o: StartWorkflowOptions): Promise<WorkflowRun>;
  get(id: string): Promise<WorkflowRun>;
  /**
   * Until the run stops (blocked at a sign-off or a permission, or ended), or the timeout. A detached
   * run is answered as it stands when no worker took its walk for a minute, or no walk is left for it.
   */
  wait(id: string, o?: WaitRunOptions): Promise<WorkflowRun>;
  /** Walks a run again from its unfinished step (after a crash, or a permission answered). */
  resume(id: string): Promise<WorkflowRun>;
  /** Answers the sign-off the run waits for; approve goes on, reject fails the run. */
  answer(id: string, answer: { approve: boolean; comment?: string; by?: string }): Promise<WorkflowRun>;
  /** Stops the run: its running sessions are interrupted, the run ends `cancelled`. */
  cancel(id: string): Promise<WorkflowRun>;
  /** A failed run's failed step runs again (a new attempt), then the run goes on. */
  retry(id: string): Promise<WorkflowRun>;
}

const RUN_ID = /^wfr_[A-Za-z0-9_-]{1,64}$/;
/** How often a wait re-reads a run walked by another process. */
const POLL_MS = 500;
/** How long a waiter waits for a worker to take a detached run's walk before it answers the run as queued. */
const WALK_PICKUP_MS = 60_000;

type Host = PlacementHost & { readonly stateDir?: string; readonly worktrees?: Worktrees };

/** One api per conductor and audit trail, so every caller sees the same walkers. */
const apis = new WeakMap<object, Map<string, WorkflowsApi>>();

/** `audit`: the audit trail's path, or false; default `<stateDir>/audit.jsonl`. */
export function workflowsApi(host: Host, o: { audit?: string | false } = {}): WorkflowsApi {
  const auditPath = o.audit === false ? undefined : (o.audit ?? (host.stateDir ? join(host.stateDir, "audit.jsonl") : undefined));
  const byAudit = apis.get(host) ?? new Map<string, WorkflowsApi>();
  apis.set(host, byAudit);
  const key = auditPath ?? "";
  let api = byAudit.get(key);
  if (!api) byAudit.set(key, (api = new Runs(host, auditPath ? new AuditLog(auditPath) : undefined)));
  return api;
}

class Runs implements WorkflowsApi {
  private readonly walking = new Map<string, { done: Promise<WorkflowRun>; stop: AbortController }>();
  private storeOf?: Promise<RunRecords>;

  constructor(
    private readonly host: Host,
    private readonly audit: AuditLog | undefined,
  ) {}

  /** The fleet's Redis when a queue is configured (every server of the fleet sees the run), else the state dir. */
  private store(): Promise<RunRecords> {
    if (this.storeOf) return this.storeOf;
    const fleet = this.host.queueSettings !== undefined ? this.host.taskQueue() : undefined;
    if (fleet) return (this.storeOf = fleet.then(async (q) => new (await import("./redis-run-store.js")).RedisRunStore(q)));
    if (!this.host.stateDir) throw new UsageError("Workflows keep their runs in the state dir: create the Conductor with `stateDir`.");
    return (this.storeOf = Promise.resolve(new RunStore(this.host.stateDir)));
  }

  private directory(given?: string): string {
    const dir = given ?? this.host.engine.directory;
    if (!dir) throw new UsageError("Say which project directory the workflow runs in (`directory`).");
    return dir;
  }

  list(directory?: string): Promise<FoundWorkflow[]> {
    return listWorkflows(this.directory(directory));
  }

  async runs(limit?: number): Promise<WorkflowRun[]> {
    return (await this.store()).list(limit);
  }

  async start(o: StartWorkflowOptions): Promise<WorkflowRun> {
    const directory = this.directory(o.directory);
    const { workflow, source } = await resolveWorkflow({ ref: o.workflow, text: o.text, directory });
    const inputs = runInputs(workflow, o.inputs ?? {});
    if (o.detach && this.host.queueSettings === undefined)
      throw new UsageError("`detach` walks the run on the fleet's queue: configure one (OPENCODE_CONDUCTOR_QUEUE, or the Conductor's `queue`).");
    const run = newRun(workflow, source, inputs, directory, o.detach === true);
    await (await this.store()).create(run);
    await this.audit?.append({
      tool: "workflow",
      outcome: "created",
      directory,
      detail: { run: run.id, workflow: workflow.name, source, ...(o.detach ? { detach: true } : {}) },
    });
    return this.carryOn(run.id);
  }

  async get(id: string): Promise<WorkflowRun> {
    if (typeof id !== "string" || !RUN_ID.test(id)) throw new UsageError(`${quoted(id)} is not a workflow run id (wfr_…).`);
    const store = await this.store();
    const run = await store.get(id);
    if (!run) throw new UsageError(`No workflow run ${quoted(id)} in ${store.where}.`);
    return run;
  }

  async wait(id: string, o: WaitRunOptions = {}): Promise<WorkflowRun> {
    const until = o.timeoutMs === undefined ? Infinity : Date.now() + o.timeoutMs;
    let pickup: { since: number; ms: number } | undefined;
    for (;;) {
      const run = await this.get(id);
      if (run.status !== "running" || o.signal?.aborted || Date.now() >= until) return run;
      const mine = this.walking.get(id);
      if (mine) {
        const left = until - Date.now();
        const abort = o.signal ? untilAborted(o.signal) : undefined;
        try {
          await Promise.race([mine.done.catch(() => undefined), ...(left < Infinity ? [sleep(left)] : []), ...(abort ? [abort.done] : [])]);
        } finally {
          abort?.off(); // each round of the loop listens anew: the last one's listener must go
        }
        continue;
      }
      // Walked by another process (or by nobody, after a crash): re-read now and then. A detached
      // run's dead walker is the queue's business (its walk job moves to another worker), but a
      // waiter is not kept waiting on a walk nobody takes or nobody will do: see walkStalled.
      if (run.detached) {
        const stalled = await this.walkStalled(id, run, (pickup ??= { since: Date.now(), ms: o.walkPickupMs ?? WALK_PICKUP_MS }));
        if (stalled) return stalled;
      } else if (walkerGone(run)) return run;
      await sleep(Math.min(POLL_MS, Math.max(0, until - Date.now())));
    }
  }

  /**
   * The run as it stands when waiting on its walk is pointless: no walk job is queued or walking
   * (it ended with the run still running: a `resume` queues one), or its walk job has waited
   * `pickup.ms` for a worker that takes walks (the run stays queued; a later worker walks it).
   */
  private async walkStalled(id: string, run: WorkflowRun, pickup: { since: number; ms: number }): Promise<WorkflowRun | undefined> {
    const fleet = await this.fleet();
    const state = await walkState(fleet, run);
    if (state === "walking") pickup.since = Date.now();
    if (state === "queued") return Date.now() - pickup.since >= pickup.ms ? run : undefined;
    if (state === "none") {
      // The walk may have ended (the run then says so) or been queued again since the first read.
      const again = await this.get(id);
      if (again.status === "running" && (await walkState(fleet, again)) === "none") return again;
    }
    return undefined;
  }

  async resume(id: string): Promise<WorkflowRun> {
    const run = await this.get(id);
    if (this.walking.has(id)) return run;
    if (run.end) throw new UsageError(`Run ${id} ended ${run.end.status}${run.end.status === "failed" ? ": retry it to run its failed step again" : ""}.`);
    const mine = run.owner.pid === process.pid;
    if (run.detached) {
      if ((await walkState(await this.fleet(), run)) !== "none") return run; // its walk job waits for a worker, or one walks it
    } else if (run.status === "running" && !mine && !walkerGone(run))
      throw new UsageError(`Run ${id} is being walked by process ${run.owner.pid} on ${run.owner.host}: wait for it, or cancel it.`);
    const step = run.steps[run.cursor];
    const attempt = step && lastAttempt(step);
    if (run.status === "blocked" && run.workflow.steps[run.cursor]?.kind === "approval" && !attempt?.signOff) return run; // still waits for its person
    const store = await this.store();
    if (run.status === "blocked") await store.update(id, (r) => ({ ...r, status: "running" }));
    return this.carryOn(id);
  }

  async answer(id: string, a: { approve: boolean; comment?: string; by?: string }): Promise<WorkflowRun> {
    if (typeof a?.approve !== "boolean") throw new UsageError("Answer a sign-off with `approve`: true or false.");
    const run = await this.get(id);
    const step = run.workflow.steps[run.cursor];
    if (run.status !== "blocked" || step?.kind !== "approval")
      throw new UsageError(`Run ${id} waits for no sign-off (it is ${run.status}${step ? ` at step "${step.name}"` : ""}).`);
    const signOff: SignOff = {
      decision: a.approve ? "approve" : "reject",
      by: a.by ?? "library",
      at: new Date().toISOString(),
      ...(a.comment ? { comment: a.comment } : {}),
    };
    let taken = false;
    const store = await this.store();
    await store.update(id, (r) => {
      taken = false; // a store may call this again on a changed record (Redis): only the last call counts
      const last = lastAttempt(r.steps[r.cursor]!);
      if (r.status !== "blocked" || !last || last.signOff) return undefined; // answered meanwhile
      last.signOff = signOff;
      taken = true;
      return { ...r, status: "running" };
    });
    if (!taken) throw new UsageError(`Run ${id}'s sign-off was answered already.`);
    await this.audit?.append({
      tool: "workflow",
      outcome: "answered",
      decision: signOff.decision,
      detail: { run: id, workflow: run.workflow.name, step: step.name, by: signOff.by, ...(a.comment ? { comment: a.comment } : {}) },
    });
    return this.carryOn(id);
  }

  async cancel(id: string): Promise<WorkflowRun> {
    const run = await this.get(id);
    if (run.end) return run;
    const store = await this.store();
    await store.update(id, (r) => (r.cancelRequestedAt ? undefined : { ...r, cancelRequestedAt: new Date().toISOString() }));
    // The sessions of the step that runs now: interrupted, so no agent goes on working for a cancelled run.
    const attempt = run.steps[run.cursor] && lastAttempt(run.steps[run.cursor]!);
    const sessions = attempt?.turns?.map((t) => t.sessionId) ?? (await this.sessionsOf(attempt?.requestId));
    await Promise.all(sessions.filter((s): s is string => Boolean(s)).map((s) => interruptAt(this.host, s).catch(() => undefined)));
    const mine = this.walking.get(id);
    if (mine) {
      mine.stop.abort();
      return mine.done.catch(() => this.get(id));
    }
    if (run.detached) {
      // A walk job no worker has taken is taken off the queue; a worker walking the run ends it.
      if ((await dropQueuedWalk(await this.fleet(), run)) === "walking") return (await store.get(id))!;
    } else if (run.status === "running" && !walkerGone(run) && run.owner.pid !== process.pid) return (await store.get(id))!; // its walker ends it
    return (await store.update(id, (r) =>
      r.end ? undefined : { ...r, status: "cancelled", end: { status: "cancelled", at: new Date().toISOString(), reason: "cancelled on request" } },
    ))!;
  }

  async retry(id: string): Promise<WorkflowRun> {
    const run = await this.get(id);
    if (run.status !== "failed") throw new UsageError(`Run ${id} is ${run.status}: only a failed run is retried.`);
    const store = await this.store();
    await store.update(id, (r) => {
      const rec = r.steps[r.cursor]!;
      const last = lastAttempt(rec);
      // An outcome opencode never gave (no answer, a timeout): the same attempt, re-attached; else a new one.
      const unknown = last?.turns?.length && last.turns.every((t) => t.status === "unreachable" || t.status === "running");
      if (last && unknown) last.status = "running";
      else
        rec.attempts.push({
          n: rec.attempts.length + 1,
          status: "pending",
          startedAt: new Date().toISOString(),
          ...(last?.feedback ? { feedback: last.feedback } : {}),
        });
      rec.status = "pending";
      const { end: _end, ...rest } = r;
      return { ...rest, status: "running", owner: thisProcess() };
    });
    await this.audit?.append({ tool: "workflow", outcome: "retried", detail: { run: id, workflow: run.workflow.name, step: run.steps[run.cursor]?.name } });
    return this.carryOn(id);
  }

  /**
   * What the ledger holds for a step's request id (a step whose turns are not written yet): its
   * sessions, or on the fleet its task or batch id (interrupting that cancels it on the queue, or
   * has its worker interrupt the turn).
   */
  private async sessionsOf(requestId: string | undefined): Promise<string[]> {
    if (!requestId) return [];
    const record = (await this.host.ledger.list(200)).find((d) => d.requestId === requestId);
    if (record?.queueId) return [record.queueId];
    return record?.sessions.filter((s): s is string => typeof s === "string") ?? [];
  }

  private fleet(): Promise<QueueConnection> {
    const queue = this.host.taskQueue();
    if (!queue) throw new UsageError("This run is walked on the fleet's queue: configure the queue (OPENCODE_CONDUCTOR_QUEUE) to change it.");
    return queue;
  }

  /** The run walks on: as a walk job for a worker when it is detached, else in this process. Resolves with its record then. */
  private async carryOn(id: string): Promise<WorkflowRun> {
    const store = await this.store();
    const run = (await store.get(id))!;
    if (run.detached) return queueWalk(await this.fleet(), store, id);
    this.walk(id);
    return run;
  }

  private walk(id: string): void {
    if (this.walking.has(id)) return;
    const stop = new AbortController();
    // No log of its own in process: a failing heartbeat goes to the audit trail (when there is one) and stderr.
    const log = (line: string, state: "failing" | "recovered") => {
      process.stderr.write(`opencode-conductor: ${line}\n`);
      void this.audit?.append({
        tool: "workflow",
        outcome: state === "failing" ? "error" : "ok",
        ...(state === "failing" ? { error: line } : {}),
        detail: { run: id, heartbeat: line },
      });
    };
    const done = this.store().then((store) => beating(store, id, () => walk({ host: this.host, store, audit: this.audit, signal: stop.signal }, id), { log }));
    const entry = { done, stop };
    this.walking.set(id, entry);
    const over = () => {
      this.walking.delete(id);
    };
    void done.then(
      () => over(),
      (error: unknown) => {
        over();
        // The record could not be written: say so in it if it can be, never silently.
        void this.audit?.append({ tool: "workflow", outcome: "error", error: (error as Error).message, detail: { run: id } });
      },
    );
  }
}

function newRun(workflow: Workflow, source: string, inputs: Record<string, InputValue>, directory: string, detached: boolean): WorkflowRun {
  const now = new Date().toISOString();
  return {
    id: newRunId(),
    workflow,
    source,
    inputs,
    directory,
    status: "running",
    cursor: 0,
    steps: workflow.steps.map((s) => ({ name: s.name, kind: s.kind, status: "pending", attempts: [] })),
    owner: thisProcess(),
    createdAt: now,
    updatedAt: now,
    ...(detached ? { detached: { walks: 0 } } : {}),
  };
}

/** Resolves when `signal` aborts; `off` removes its listener once the caller stops waiting. */
function untilAborted(signal: AbortSignal): { done: Promise<void>; off: () => void } {
  let off = () => undefined as void;
  const done = new Promise<void>((resolve) => {
    const listener = () => resolve();
    signal.addEventListener("abort", listener, { once: true });
    off = () => signal.removeEventListener("abort", listener);
  });
  return { done, off };
}
