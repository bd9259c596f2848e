// What placing work needs of a conductor: the core context to run it here, the private instances,
// the fleet's queue, the delegation ledger and the task records. Conductor is one; the interface
// keeps placement/ and ledger/ free of an import of conductor.ts.
import type { PendingRequest } from "../model/pending-request.js";
import type { CoreContext } from "../context.js";
import type { TaskRecords } from "../governance/task-records.js";
import type { InstanceLeases } from "../instances/leases.js";
import type { Ledger } from "../ledger/ledger.js";
import type { TaskQueue } from "../queue/client.js";
import type { Worktrees } from "../worktrees/worktrees.js";

/** A conductor a session lives on: it runs, waits for, reads and stops the session's turns. */
export interface SessionHost extends CoreContext {
  pending(options: { sessionId?: string }): Promise<PendingRequest[]>;
  close(): void;
}

export interface PlacementHost extends SessionHost {
  /** A queue is configured. */
  readonly queueSettings?: unknown;
  readonly instances?: InstanceLeases<SessionHost>;
  /** The fleet's queue (loaded on first use), when one is configured. */
  taskQueue(): Promise<TaskQueue> | undefined;
  /** With a queue: the conductor of the fleet server holding a session a worker ran (undefined: not the fleet's). */
  fleetHolder?(sessionId: string): Promise<SessionHost | undefined>;
  readonly ledger: Ledger;
  /** The task records the web console reads (with a state dir). */
  readonly records?: TaskRecords;
  /** Worktree tasks' worktrees and branches (with a state dir or private instances). */
  readonly worktrees?: Worktrees;
}
