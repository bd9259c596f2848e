// `conductor.delegations`: the delegation ledger as a library user (and the MCP Tasks binding)
// sees it. start a delegation and get its handle at once; read it by id from any process that
// shares the state dir (or Redis); wait for its end; cancel it (interrupts its opencode sessions,
// or takes its jobs off the fleet); list the newest.
import type { PendingRequest } from "../model/pending-request.js";
import { sleep } from "../../client/sleep.js";
import { interrupt as interruptSession } from "../control.js";
import { quoted, UsageError } from "../errors.js";
import type { PlacementHost } from "../placement/host.js";
import type { PlacedBatch, PlacedResult } from "../placement/result.js";
import { batchEnd, holderOf, startBatch, startTask, taskEnd, type BatchOptions, type BatchTask, type TaskOptions } from "../placement/run.js";
import { startSend, type SendStartOptions } from "../placement/send.js";
import { cancelSentMessage } from "../placement/send-cancel.js";
import { batchTaskIds } from "../queue/names.js";
import { followRecord } from "./follow.js";
import { startedSessions, type LedgerRecord } from "./record.js";
import type { Started } from "./start-once.js";
import { isTerminal, POLL_INTERVAL_MS } from "./status.js";
import { delegationView, pendingLine, type Delegation, type LiveFacts } from "./view.js";

const DELEGATION_ID = /^dlg_[A-Za-z0-9_-]{1,64}$/;

export interface DelegationsApi {
  /**
   * Starts one task (as conductor.delegate) and resolves as soon as it is accepted (its session
   * exists, or it is queued), with its handle; the work goes on. By default it waits through
   * permissions and questions (they show as `input_required` with `pending`) instead of returning.
   */
  delegate(options: TaskOptions): Promise<Delegation>;
  /** Starts a batch (as conductor.parallel) and resolves with its handle once its first task has a session (or it is queued). */
  parallel(tasks: BatchTask[], options?: BatchOptions): Promise<Delegation>;
  /**
   * Sends a message to a session that exists (as conductor.send) and resolves once it is on record,
   * with its handle; the delegation then follows the turn the message starts to its end (through
   * permissions and questions, as delegate).
   */
  send(sessionId: string, message: string, options?: SendStartOptions): Promise<Delegation>;
  /** The delegation now: its status read from the conductor's own verdict, its result once over. */
  get(id: string): Promise<Delegation>;
  /** Waits until it is over (completed, failed or cancelled), or the timeout: then it answers as get. */
  wait(id: string, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<Delegation>;
  /**
   * Interrupts its opencode sessions (or cancels its jobs on the fleet); a task that ended first stays
   * `completed`. A sent message still queued behind another turn is withdrawn where the server can
   * (2.0.26's inbox); where it cannot, nothing is interrupted and it rejects with QueuedMessageError.
   */
  cancel(id: string): Promise<Delegation>;
  /** The newest delegations, as recorded (no opencode reads). */
  list(options?: { limit?: number }): Promise<Delegation[]>;
}

export function delegationsApi(host: PlacementHost): DelegationsApi {
  const api: DelegationsApi = {
    async delegate(options) {
      return handle(startTask(host, { returnOnBlocked: false, ...options }));
    },
    async parallel(tasks, options) {
      return handle(startBatch(host, tasks, options));
    },
    async send(sessionId, message, options) {
      return handle(startSend(host, sessionId, message, { returnOnBlocked: false, ...options, wait: true }));
    },
    get: (id) => read(host, id),
    async wait(id, o = {}) {
      const deadline = o.timeoutMs === undefined ? Infinity : Date.now() + o.timeoutMs;
      for (;;) {
        const now = await read(host, id);
        const left = deadline - Date.now();
        if (isTerminal(now.status) || left <= 0 || o.signal?.aborted) return now;
        await Promise.race([endOf(host, id, now, left), sleep(Math.min(left, FOLLOW_CHECK_MS), o.signal)]);
      }
    },
    cancel: (id) => cancel(host, id),
    async list(o = {}) {
      const limit = Math.min(Math.max(1, Math.trunc(o.limit ?? 50)), 1000);
      const retention = await host.ledger.retentionMs();
      return (await host.ledger.list(limit)).map((r) => delegationView(r, retention));
    },
  };
  return api;

  async function handle<R>(started: Started<R>): Promise<Delegation> {
    started.result.catch(() => undefined); // kept in the ledger as `failed`
    const record = await started.accepted;
    return delegationView(record, await host.ledger.retentionMs(), { status: "working" });
  }
}

/** A reader's wait is cut this often to read the record again (a settle from another process). */
const FOLLOW_CHECK_MS = 30_000;

async function record(host: PlacementHost, id: string): Promise<LedgerRecord> {
  if (typeof id !== "string" || !DELEGATION_ID.test(id))
    throw new UsageError(`${quoted(String(id).slice(0, 100))} is not a delegation id (dlg_…, as conductor.delegations.delegate returns).`);
  const found = await host.ledger.get(id);
  if (!found) throw new UsageError(`No delegation ${quoted(id)}: unknown, or its retention passed.`);
  return found;
}

async function read(host: PlacementHost, id: string): Promise<Delegation> {
  const r = await record(host, id);
  const retention = await host.ledger.retentionMs();
  if (r.end) return delegationView(r, retention);
  if (r.placement === "queue") return readQueued(host, r, retention);
  if (r.placement === "here" && r.server !== undefined && r.server !== host.engine.url) {
    const statusMessage = `its sessions live on ${r.server}; this conductor talks to ${host.engine.url}: read it through a conductor of that server`;
    return delegationView(r, retention, { status: "working", statusMessage });
  }
  // Not started by this process, or its start here returned while the work goes on: follow it here until the verdict.
  if (!host.ledger.runs(r.id)) void host.ledger.follow(r.id, () => followRecord(host, r));
  return delegationView(r, retention, await liveFacts(host, r));
}

async function liveFacts(host: PlacementHost, r: LedgerRecord): Promise<LiveFacts> {
  const pending: PendingRequest[] = [];
  let unreachable: string | undefined;
  await Promise.all(
    startedSessions(r).map(async (sessionId) => {
      try {
        pending.push(...(await (await holderOf(host, r, sessionId)).pending({ sessionId })));
      } catch (error) {
        unreachable = (error as Error).message.slice(0, 200);
      }
    }),
  );
  const single = r.kind !== "parallel";
  if (pending.length > 0)
    return {
      status: "input_required",
      ...(single ? { turn: "blocked" as const } : {}),
      statusMessage: `waiting for an answer: ${pendingLine(pending[0]!)}`,
      pending,
    };
  const stopped = host.ledger.followError(r.id);
  const statusMessage = unreachable
    ? `opencode did not answer (${unreachable}); the outcome is not known yet`
    : stopped
      ? `following it stopped (${stopped}); the next read tries again`
      : startedSessions(r).length === 0
        ? "starting"
        : "running";
  return { status: "working", ...(single ? { turn: unreachable ? ("unreachable" as const) : ("running" as const) } : {}), statusMessage };
}

async function readQueued(host: PlacementHost, r: LedgerRecord, retention: number): Promise<Delegation> {
  const fleet = await host.taskQueue();
  if (!fleet || r.queueId === undefined) return delegationView(r, retention, { status: "working", statusMessage: "being queued" });
  if (r.kind === "delegate") {
    const now = await fleet.read(r.queueId);
    const end = taskEnd(now, r);
    if (end) return delegationView((await host.ledger.settle(r.id, end)) ?? r, retention);
    return delegationView(r, retention, { status: "working", turn: "running", statusMessage: now.error?.message ?? "queued on the fleet" });
  }
  const end = batchEnd(await fleet.waitBatch(r.queueId, { timeoutMs: 0 }), r);
  if (end) return delegationView((await host.ledger.settle(r.id, end)) ?? r, retention);
  return delegationView(r, retention, { status: "working", statusMessage: "queued on the fleet" });
}

/** What a waiter in this process can await for the end of `id`. */
async function endOf(host: PlacementHost, id: string, now: Delegation, left: number): Promise<unknown> {
  const local = host.ledger.done(id);
  if (local) return local.catch(() => undefined);
  if (now.placement === "queue" && now.queueId !== undefined) {
    const fleet = await host.taskQueue();
    if (!fleet) return sleep(POLL_INTERVAL_MS);
    const timeoutMs = Math.min(left, FOLLOW_CHECK_MS);
    return (now.kind === "delegate" ? fleet.wait(now.queueId, { timeoutMs }) : fleet.waitBatch(now.queueId, { timeoutMs })).catch(() => undefined);
  }
  const r = await host.ledger.get(id);
  if (!r) return undefined;
  await host.ledger.follow(id, () => followRecord(host, r));
  // Not settled by it (it failed, opencode away; or the starting call still runs elsewhere): read again a poll interval later.
  if (!(await host.ledger.get(id))?.end) await sleep(POLL_INTERVAL_MS);
}

async function cancel(host: PlacementHost, id: string): Promise<Delegation> {
  const before = await record(host, id);
  // Before the cancel goes on record: a message that was not withdrawn must not read cancelled.
  const sent = before.end || before.placement === "queue" ? "started" : await cancelSentMessage(host, before);
  if (sent === "withdrawn") {
    // On record as cancelled first (so a start this process runs, whose wait the cancel stops, ends cancelled too), then settled.
    await host.ledger.requestCancel(id);
    await host.ledger.settle(id, { status: "cancelled", at: new Date().toISOString(), note: "taken off opencode's queue before it ran" });
    return read(host, id);
  }
  const r = (await host.ledger.requestCancel(id)) ?? (await record(host, id));
  if (r.end) return read(host, id);
  if (r.placement === "queue" && r.queueId !== undefined) {
    const fleet = (await host.taskQueue())!;
    if (r.kind === "delegate") {
      const stopped = await fleet.cancel(r.queueId);
      const end = taskEnd(stopped, r);
      if (end) await host.ledger.settle(id, end);
    } else {
      await Promise.all(batchTaskIds(r.queueId, r.size).map((taskId) => fleet.cancel(taskId).catch(() => undefined)));
    }
    return read(host, id);
  }
  const stopped = await Promise.all(
    startedSessions(r).map(async (sessionId) => interruptSession(await holderOf(host, r, sessionId), sessionId).catch(() => undefined)),
  );
  const only = r.kind !== "parallel" ? stopped[0] : undefined;
  if (only) {
    const end = taskEnd(r.placement === "instance" ? { ...only, isolation: "instance" } : only, r);
    if (end) await host.ledger.settle(id, end);
  }
  return read(host, id);
}

export type { Delegation, PlacedBatch, PlacedResult };
