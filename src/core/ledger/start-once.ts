// One start per request id, wherever it comes from (a library call, an MCP tool, a retried call
// after a client timeout, another MCP server on the same state dir or Redis): the start claims its
// record in the ledger first; a repeat finds the record, waits for the first start's sessions and
// replays them (`replayed: true`) instead of starting a second agent. A start that fails before any
// session exists is forgotten, so the same id may be tried again.
import { quoted, UsageError } from "../errors.js";
import type { Ledger, NewRecord, SessionFacts } from "./ledger.js";
import { abandoned, type LedgerEnd, type LedgerRecord } from "./record.js";

export interface StartHooks {
  record: LedgerRecord;
  /** Records a task's session; call it before the task's prompt is sent (a send's: once opencode has taken the message). */
  onSession(sessionId: string, index: number, facts?: SessionFacts): Promise<void>;
  /** A queued start: the fleet holds it under `queueId` (its job or batch id). */
  onQueued(queueId: string): Promise<void>;
  /** Aborted by the ledger's cancel. */
  signal: AbortSignal;
}

export interface Started<R> {
  /** Resolves once the start is accepted: its first session exists, it is queued, or it ended. */
  accepted: Promise<LedgerRecord>;
  /** The start's result (the first start's sessions again for a repeat). */
  result: Promise<R & { replayed?: true }>;
}

export interface StartPlan<R> {
  run(hooks: StartHooks): Promise<R>;
  /** A repeat of an earlier start: answer from its sessions (or queue id), starting nothing. */
  replay(record: LedgerRecord): Promise<R>;
  /** The end to keep for a result (`record` as it is now), or undefined while its work goes on (running, blocked). */
  endOf(result: R, record: LedgerRecord): LedgerEnd | undefined;
}

export function startOnce<R extends object>(ledger: Ledger, input: NewRecord, plan: StartPlan<R>): Started<R> {
  let accept!: (record: LedgerRecord) => void;
  let refuse!: (error: unknown) => void;
  const accepted = new Promise<LedgerRecord>((resolve, reject) => ((accept = resolve), (refuse = reject)));
  accepted.catch(() => undefined); // the result carries the same error
  const result = (async () => {
    try {
      return await start(ledger, input, plan, accept);
    } catch (error) {
      refuse(error);
      throw error;
    }
  })();
  return { accepted, result };
}

async function start<R extends object>(
  ledger: Ledger,
  input: NewRecord,
  plan: StartPlan<R>,
  accept: (record: LedgerRecord) => void,
): Promise<R & { replayed?: true }> {
  for (let attempt = 0; ; attempt++) {
    const { record, fresh } = await ledger.claim(input);
    if (!fresh) {
      if (record.kind !== input.kind)
        throw new UsageError(`requestId ${quoted(input.requestId ?? "")} was used for ${record.origin}: give this call a new id.`);
      const ready = await ledger.whenStarted(record);
      // Released meanwhile (the first start failed before any session), or its owner died before it
      // created one (nothing was prompted): this call starts the work.
      if (!ready || abandoned(ready)) {
        if (ready) await ledger.release(ready);
        if (attempt < 3) continue;
        throw new Error(`requestId ${quoted(input.requestId ?? "")}: its earlier start keeps going away; try again.`);
      }
      accept(ready);
      return { ...(await plan.replay(ready)), replayed: true };
    }
    return run(ledger, record, plan, accept);
  }
}

async function run<R extends object>(ledger: Ledger, record: LedgerRecord, plan: StartPlan<R>, accept: (record: LedgerRecord) => void): Promise<R> {
  let sessions = 0;
  let queued = false;
  const hooks: StartHooks = {
    record,
    signal: ledger.cancelSignal(record.id) ?? new AbortController().signal,
    onSession: async (sessionId, index, facts) => {
      await ledger.attach(record.id, index, sessionId, facts);
      if (sessions++ === 0) accept({ ...record, sessions: record.sessions.map((s, i) => (i === index ? sessionId : s)) });
    },
    onQueued: async (queueId) => {
      queued = true;
      await ledger.queued(record.id, queueId);
      await ledger.markStarted(record.id);
      accept({ ...record, queueId, started: true });
    },
  };
  const work = plan.run(hooks);
  ledger.running(record.id, work);
  try {
    const result = await work;
    // Decided on the record as it is now: a cancel (from any process) tells interrupted from cancelled.
    accept((await ledger.finish(record.id, (latest) => plan.endOf(result, latest))) ?? record);
    return result;
  } catch (error) {
    if (sessions === 0 && !queued) {
      // Nothing was prompted: forget the start, so the same request id can be tried again.
      await ledger.release(record);
      throw error;
    }
    const e = error instanceof Error ? error : new Error(String(error));
    const at = new Date().toISOString();
    await ledger.finish(record.id, (latest) => ({
      status: latest.cancelRequestedAt !== undefined ? "cancelled" : "failed",
      at,
      error: { name: e.name, message: e.message.slice(0, 2000) },
    }));
    throw error;
  }
}
