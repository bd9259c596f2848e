// A delegation as a caller reads it (conductor.delegations.get): the ledger's record plus, while it
// runs, what opencode says now (the requests that wait for an answer). Shaped so the MCP Tasks
// binding maps it field by field: status, statusMessage, createdAt, lastUpdatedAt, ttlMs,
// pollIntervalMs, and the pending requests (inputRequests) or the result / error when over.
import type { Delivery } from "../control.js";
import type { PendingRequest } from "../model/pending-request.js";
import type { Placement } from "../placement/decide.js";
import type { PlacedBatch, PlacedResult } from "../placement/result.js";
import type { TurnStatus } from "../turns/summary.js";
import type { DelegationKind, LedgerRecord } from "./record.js";
import { POLL_INTERVAL_MS, type DelegationStatus } from "./status.js";

export interface Delegation {
  id: string;
  kind: DelegationKind;
  requestId?: string;
  origin: string;
  placement: Placement;
  /** `send`: how the message went in. */
  delivery?: Delivery;
  status: DelegationStatus;
  /** One task: the conductor's status of its turn (running, blocked, done, error, interrupted, lost, unreachable, …). */
  turn?: TurnStatus;
  /** One line on the state (e.g. the request that waits, the answer's first line, the error). */
  statusMessage?: string;
  /** The session of each task, in task order (null: not started). */
  sessions: Array<string | null>;
  /** On the queue: the fleet's task or batch id. */
  queueId?: string;
  /** `input_required`: the permission requests and questions that wait (answer them with conductor.answer). */
  pending?: PendingRequest[];
  /** Over: the call's result (completed and cancelled). */
  result?: PlacedResult | PlacedBatch;
  /** `failed`: the error of the call. */
  error?: { name: string; message: string };
  /** What this reader could not know (e.g. checks that only the starting call runs). */
  note?: string;
  /** ISO times. */
  createdAt: string;
  lastUpdatedAt: string;
  /** How long after createdAt it stays readable; null while it runs (kept until it is over). */
  ttlMs: number | null;
  /** How long a poller should wait between two reads. */
  pollIntervalMs: number;
}

export interface LiveFacts {
  status: "working" | "input_required";
  turn?: TurnStatus;
  statusMessage?: string;
  pending?: PendingRequest[];
}

export function delegationView(record: LedgerRecord, retentionMs: number, live?: LiveFacts): Delegation {
  const end = record.end;
  return {
    id: record.id,
    kind: record.kind,
    ...(record.requestId !== undefined ? { requestId: record.requestId } : {}),
    origin: record.origin,
    placement: record.placement,
    ...(record.delivery ? { delivery: record.delivery } : {}),
    status: end?.status ?? live?.status ?? "working",
    ...(end ? endFacts(end.result, end.error) : live?.turn ? { turn: live.turn } : {}),
    ...(end ? {} : live?.statusMessage ? { statusMessage: live.statusMessage } : {}),
    sessions: record.sessions,
    ...(record.queueId !== undefined ? { queueId: record.queueId } : {}),
    ...(!end && live?.pending?.length ? { pending: live.pending } : {}),
    ...(end?.result ? { result: end.result } : {}),
    ...(end?.error ? { error: end.error } : {}),
    ...(end?.note ? { note: end.note } : {}),
    createdAt: record.createdAt,
    lastUpdatedAt: record.updatedAt,
    ttlMs: end ? Math.max(0, Date.parse(end.at) + retentionMs - Date.parse(record.createdAt)) : null,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

function endFacts(result: PlacedResult | PlacedBatch | undefined, error: { name: string; message: string } | undefined) {
  if (error) return { statusMessage: clip(`${error.name}: ${error.message}`) };
  if (!result) return {};
  if ("results" in result) {
    const counts = Object.entries(result.counts)
      .map(([k, v]) => `${v} ${k}`)
      .join(", ");
    return { statusMessage: `${result.results.length} tasks: ${counts}` };
  }
  const said = result.error ? `${result.error.name}: ${result.error.message}` : result.answer.split("\n", 1)[0];
  return { turn: result.status, statusMessage: clip(said ? `${result.status}: ${said}` : result.status) };
}

/** What a request that waits is about, in one line. */
export function pendingLine(r: PendingRequest): string {
  if (r.kind === "permission") return `permission ${r.permission}${r.patterns.length ? `: ${r.patterns.join(", ")}` : ""}`;
  return `question: ${r.questions[0]?.question ?? ""}`;
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
