// Following a delegation whose start is over but whose work goes on (it answered running or
// blocked, or the process that ran it is gone, e.g. SIGKILLed): the conductor's own wait on each
// session, through permissions and questions, until the turn machine gives a verdict, which then
// settles the record. Only started when someone reads the delegation, so nothing runs unasked.
import { wait as sessionWait } from "../control.js";
import type { PlacementHost } from "../placement/host.js";
import { batchEnd, holderOf, taskEnd, waitBatchAt } from "../placement/run.js";
import type { PlacedBatch } from "../placement/result.js";
import { withWorktree } from "../worktrees/task.js";
import { abandoned, ownerGone, type LedgerEnd, type LedgerRecord } from "./record.js";

/** One wait of a follower; it waits again until the turn is over. */
const FOLLOW_SLICE_MS = 10 * 60_000;
/** Before asking again when opencode did not answer (a refused connection answers at once: no busy loop). */
const UNREACHABLE_PAUSE_MS = 5_000;

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

const GOVERNED_NOTE =
  "Its checks or budget run only in the call that started it, which stopped before the turn ended (it returned early, or its process stopped): this is the turn as opencode recorded it, without them.";

export async function followRecord(host: PlacementHost, record: LedgerRecord): Promise<void> {
  const ledger = host.ledger;
  // Checks and budgets run in the starting call: while it runs (elsewhere), only it may say the work is over.
  if (record.governed && !record.returned && !ownerGone(record.owner)) return;
  const settle = (end: LedgerEnd) => ledger.settle(record.id, record.governed ? { ...end, note: GOVERNED_NOTE } : end);
  if (record.kind !== "parallel") {
    const sessionId = record.sessions[0];
    if (!sessionId) {
      // Its owner stopped between accepting it and creating its session: no prompt was sent.
      if (record.started || abandoned(record))
        await ledger.settle(record.id, {
          status: "failed",
          at: new Date().toISOString(),
          error:
            record.kind === "send"
              ? {
                  name: "NotRecorded",
                  message: "The process that accepted it stopped before it recorded the message as sent: read the session to see whether it arrived.",
                }
              : { name: "NotStarted", message: "The process that accepted it stopped before it created a session: nothing ran." },
        });
      return;
    }
    const holder = await holderOf(host, record, sessionId);
    for (;;) {
      const summary = await sessionWait(holder, sessionId, { timeoutMs: FOLLOW_SLICE_MS, returnOnBlocked: false });
      const now = await ledger.get(record.id);
      if (!now || now.end) return;
      // A send's message has not started its turn yet (queued behind the turn before it): wait on.
      if (now.priorTurn !== undefined && summary.messageId === now.priorTurn) {
        await pause(UNREACHABLE_PAUSE_MS);
        continue;
      }
      const placed = record.placement === "worktree" ? await withWorktree(host, summary) : summary;
      const end = taskEnd(record.placement === "instance" ? { ...summary, isolation: "instance" } : placed, now);
      if (end) return void (await settle(end));
      if (summary.status === "unreachable") await pause(UNREACHABLE_PAUSE_MS);
    }
  }
  // A batch: once no more sessions will come, wait for each (a task without one never started).
  const ready = (await ledger.whenStarted(record)) ?? record;
  for (;;) {
    const batch: PlacedBatch = await waitBatchAt(host, ready.sessions, { timeoutMs: FOLLOW_SLICE_MS, returnOnBlocked: false });
    const now = await ledger.get(record.id);
    if (!now || now.end) return;
    const end = batchEnd(batch, now);
    if (end) return void (await settle(end));
    if (batch.results.some((r) => r.status === "unreachable")) await pause(UNREACHABLE_PAUSE_MS);
  }
}
