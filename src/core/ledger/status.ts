// A delegation's status in the words of the MCP Tasks extension (io.modelcontextprotocol/tasks),
// read from the conductor's own status of the turn. This table is the only place that maps one to
// the other: a new turn status is one line here (the compiler asks for it).
import type { TurnStatus } from "../turns/summary.js";

/**
 * `working`: not known to be over (running, or its outcome not known yet); `input_required`: a
 * permission or question waits for an answer; `completed`: the turn ended as opencode recorded it
 * (done, error, interrupted, lost, …: the result says which); `failed`: the call itself failed (an
 * error, not a turn outcome); `cancelled`: stopped by the ledger's cancel.
 */
export type DelegationStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

export const DELEGATION_STATUS: Record<TurnStatus, DelegationStatus> = {
  running: "working",
  blocked: "input_required",
  done: "completed",
  error: "completed",
  // `cancelled` instead when the ledger's cancel asked for the interruption (see statusOf).
  interrupted: "completed",
  lost: "completed",
  // opencode did not answer: the outcome may still come, so the delegation is not over.
  unreachable: "working",
  checks_failed: "completed",
  budget_exceeded: "completed",
};

/** Rows of a batch that are no turn at all: they never started, or failed before a session existed. */
export type BatchRowStatus = TurnStatus | "not_started";

export function statusOf(turn: BatchRowStatus, cancelRequested: boolean): DelegationStatus {
  if (turn === "not_started") return cancelRequested ? "cancelled" : "completed";
  const status = DELEGATION_STATUS[turn];
  return status === "completed" && turn === "interrupted" && cancelRequested ? "cancelled" : status;
}

/** A batch: input_required while any task waits for an answer, working while any runs, else over. */
export function batchStatusOf(rows: readonly BatchRowStatus[], cancelRequested: boolean): DelegationStatus {
  const each = rows.map((r) => statusOf(r, cancelRequested));
  if (each.includes("input_required")) return "input_required";
  if (each.includes("working")) return "working";
  return cancelRequested && each.includes("cancelled") ? "cancelled" : "completed";
}

export function isTerminal(status: DelegationStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** What a client should wait between two reads of a delegation (MCP: `pollIntervalMs`). */
export const POLL_INTERVAL_MS = 2_000;
