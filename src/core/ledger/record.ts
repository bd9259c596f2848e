// What the delegation ledger keeps of one accepted delegate, parallel or send call: its id (the MCP
// task id later), the request id that names it, where it runs, the opencode sessions it started
// (one, or one per task of a batch), the process that runs it, and, once over, its end. Plain
// JSON: the same record lives in the state dir or in Redis.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { isSameProcess, processStartTime } from "../../client/discovery/processes.js";
import type { Delivery } from "../control.js";
import type { Placement } from "../placement/decide.js";
import type { PlacedBatch, PlacedResult } from "../placement/result.js";
import type { DelegationStatus } from "./status.js";

/** `send`: a message to a session that exists (conductor.send with a request id), followed to its turn's end. */
export type DelegationKind = "delegate" | "parallel" | "send";

/** The process that runs the start (its sessions are created and followed there). */
export interface Owner {
  pid: number;
  host: string;
  /** Linux start time, to tell a reused pid from the owner. */
  startTime?: number;
}

export interface LedgerEnd {
  status: Exclude<DelegationStatus, "working" | "input_required">;
  /** ISO time. */
  at: string;
  /** The result the call gave (delegate: one task's, parallel: the batch's). */
  result?: PlacedResult | PlacedBatch;
  /** `failed`: the error the call threw. */
  error?: { name: string; message: string };
  /** What a reader other than the owner could not know (e.g. checks that never ran after a restart). */
  note?: string;
}

export interface LedgerRecord {
  /** `dlg_` and 22 random characters: unguessable, as the MCP Tasks extension asks of task ids. */
  id: string;
  kind: DelegationKind;
  requestId?: string;
  /** Who started it: a tool (`oc_delegate`), or the library verb (`delegate`). */
  origin: string;
  placement: Placement;
  /** The opencode server it was started against (URL without credentials); a private instance's server is in the instance registry. */
  server?: string;
  /** `send`: how the message went in (queue or steer). */
  delivery?: Delivery;
  /**
   * `send`: the user message of the session's last turn before this message went in. A reader
   * following the session never reports that turn as this message's (a queued message's turn comes later).
   */
  priorTurn?: string;
  /** `send`: the id opencode gave the message when it took it (2.x: its input's, in the inbox until promoted). */
  sentInput?: string;
  /** Tasks in it (1 for delegate and send). */
  size: number;
  /** The session of each task, in task order; null: not started (yet). */
  sessions: Array<string | null>;
  /** On the queue: the fleet's task or batch id. */
  queueId?: string;
  owner: Owner;
  /** Every task it will start has started (or the start ended): no more sessions will come. */
  started: boolean;
  /** The starting call has returned (with its result, or early: running, blocked); later readers may settle it. */
  returned?: boolean;
  /** It had checks or a budget, which only its owner runs. */
  governed?: boolean;
  /** ISO times. */
  createdAt: string;
  updatedAt: string;
  cancelRequestedAt?: string;
  end?: LedgerEnd;
}

export function newDelegationId(): string {
  return `dlg_${randomBytes(16).toString("base64url")}`;
}

let self: Owner | undefined;

/** This process as an owner; read once (its pid, host and start time do not change while it runs; /proc is read synchronously). */
export function thisProcess(): Owner {
  self ??= { pid: process.pid, host: hostname(), startTime: processStartTime(process.pid) };
  return { ...self };
}

/** The owner is known to have died (same host, process gone or its pid reused); on another host nobody can tell. */
export function ownerGone(owner: Owner): boolean {
  if (owner.host !== hostname()) return false;
  return !isSameProcess(owner.pid, owner.startTime);
}

/** A start creates its first session (or job) within seconds of its claim; one that has none after this long never will. */
const START_GRACE_MS = 2 * 60_000;

/**
 * Claimed, but nothing was started and nothing will be: its owner died before it created a session
 * (or queued it), or it has none long after its claim (an owner on another host that stopped).
 */
export function abandoned(record: LedgerRecord, now = Date.now()): boolean {
  if (record.started || record.queueId !== undefined || startedSessions(record).length > 0) return false;
  return ownerGone(record.owner) || now - Date.parse(record.createdAt) > START_GRACE_MS;
}

/** Sessions the record holds (the batch's in task order, without the unstarted). */
export function startedSessions(record: LedgerRecord): string[] {
  return record.sessions.filter((s): s is string => typeof s === "string");
}
