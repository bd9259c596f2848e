// What the state dir keeps of one workflow run: the workflow as it was when the run started (a
// later edit of the file does not change a run), its inputs, the process running it, and each
// step's attempts: when they started and ended, what opencode recorded for their sessions (the
// turn's status, answer, cost and tokens, as the core's turn summary gave them), the checks'
// exits, a review's verdict, a sign-off's answer. Plain JSON, one file per run (run-store.ts).
import { randomBytes } from "node:crypto";
import type { CheckRun } from "../governance/checks.js";
import type { Owner } from "../ledger/record.js";
import type { InputValue, Workflow } from "./definition.js";

/** `running`: a process walks it; `blocked`: a sign-off waits for a person; the rest are ends. */
export type RunStatus = "running" | "blocked" | "done" | "failed" | "cancelled";
export type StepStatus = "pending" | "running" | "blocked" | "done" | "failed" | "cancelled";

/** One session's turn as the core reported it (the turn machine's verdict on opencode's record). */
export interface RecordedTurn {
  sessionId?: string;
  /** done, error, interrupted, lost, unreachable, running, blocked, checks_failed, budget_exceeded … */
  status: string;
  /** The answer's text, clipped. */
  answer?: string;
  cost?: number;
  tokens?: number;
  error?: { name?: string; message?: string };
  /** Files the turn changed. */
  files?: string[];
  /**
   * With isolation `worktree`: the task's branch, its base and head. On the fleet (`repo`: the
   * remote the worker fetched and pushed to) the branch is the worker's, fetched into the run's
   * repository, and there is no directory here.
   */
  worktree?: { branch?: string; base?: string; head?: string; directory?: string; repo?: string };
  directory?: string;
  /** Run on the fleet's queue: the task, the worker that ran it, and the opencode server the session is on (its URL). */
  queued?: { taskId: string; worker?: string; server?: string };
}

export interface Verdict {
  verdict: "approve" | "request_changes";
  comments: string[];
}

export interface SignOff {
  decision: "approve" | "reject";
  by: string;
  comment?: string;
  at: string;
}

export interface Attempt {
  /** 1-based within its step. */
  n: number;
  status: StepStatus;
  startedAt: string;
  endedAt?: string;
  /** What the step was sent back with (a check's failure, a review's comments). */
  feedback?: string;
  /** The ledger's request id of an agent or review attempt: a resume replays it instead of prompting again. */
  requestId?: string;
  /** Agent and review steps: each task's turn (one, or one per item with `each`). */
  turns?: RecordedTurn[];
  checks?: CheckRun[];
  verdict?: Verdict;
  /** Approval: what was asked, and the answer once given. */
  asked?: string;
  signOff?: SignOff;
  /** Deliver: what landed where. */
  delivered?: Record<string, unknown>;
  /** Why it failed (said in words; the turns hold opencode's own record). */
  reason?: string;
  cost?: number;
}

export interface StepRecord {
  name: string;
  kind: string;
  status: StepStatus;
  attempts: Attempt[];
}

export interface RunEnd {
  status: Extract<RunStatus, "done" | "failed" | "cancelled">;
  at: string;
  reason?: string;
}

export interface WorkflowRun {
  /** `wfr_` and 16 random characters. */
  id: string;
  workflow: Workflow;
  /** The file it came from, or "inline". */
  source: string;
  inputs: Record<string, InputValue>;
  directory?: string;
  status: RunStatus;
  /** The step being walked (index into workflow.steps). */
  cursor: number;
  steps: StepRecord[];
  owner: Owner;
  /** The walker's last "still here" (every 15 s): how a process on another machine tells a dead walker from a busy one. */
  heartbeatAt?: string;
  createdAt: string;
  updatedAt: string;
  cancelRequestedAt?: string;
  end?: RunEnd;
  /**
   * Walked on the fleet's queue (started with `detach`): every walk of the run is a walk job
   * (walk-queue.ts), never the process that started, resumed or answered it. `walks` counts the
   * jobs queued so far; only the newest one (`RUN.walk-N`) may walk the run.
   */
  detached?: { walks: number };
}

export function newRunId(): string {
  return `wfr_${randomBytes(12).toString("base64url")}`;
}

/** What the run cost so far: the steps' attempts added up (undefined when nothing reported a cost). */
export function runCost(run: WorkflowRun): number | undefined {
  const costs = run.steps.flatMap((s) => s.attempts.map((a) => a.cost)).filter((c): c is number => c !== undefined);
  return costs.length ? costs.reduce((a, b) => a + b, 0) : undefined;
}

export function lastAttempt(step: StepRecord): Attempt | undefined {
  return step.attempts[step.attempts.length - 1];
}
