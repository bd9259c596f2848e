// Where workflow runs are kept: one interface, two stores. Without a queue, the state dir
// (run-store.ts: a file per run under a lock); with OPENCODE_CONDUCTOR_QUEUE, the fleet's Redis
// (redis-run-store.ts), beside the delegation ledger its agent steps already use there, so any MCP
// server or CLI of the fleet lists, resumes and answers the same run.
import type { WorkflowRun } from "./run-record.js";

export interface RunRecords {
  /** Where the runs are, for messages ("in /state/workflows", "in the fleet's Redis"). */
  readonly where: string;
  create(run: WorkflowRun): Promise<void>;
  get(id: string): Promise<WorkflowRun | undefined>;
  /** A read-modify-write of one run for every process sharing the store; `change` answers the new run, or undefined to leave it. */
  update(id: string, change: (run: WorkflowRun) => WorkflowRun | undefined): Promise<WorkflowRun | undefined>;
  /** Runs, newest first. */
  list(limit?: number): Promise<WorkflowRun[]>;
}
