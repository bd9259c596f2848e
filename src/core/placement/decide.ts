// Where work runs, decided once for every verb: on this conductor's server ("here"), on a private
// opencode server of the task's directory ("instance"), in a git worktree of its own with a private
// server there ("worktree", worktrees/task.ts), or as a job for the fleet's workers ("queue", only
// with a queue configured). Every refusal of a combination that cannot run is here,
// so the library and the MCP tools refuse the same things with the same words.
import { isSessionId } from "../inputs/ids.js";
import { UsageError } from "../errors.js";

export type Placement = "here" | "instance" | "worktree" | "queue";

/** What the decision reads of a conductor. */
export interface PlacementContext {
  /** A queue is configured (OPENCODE_CONDUCTOR_QUEUE or `queue: { url }`). */
  queued: boolean;
  /** Private instances are configured. */
  instances: boolean;
}

export type PlacementRequest =
  /** One task: new work goes to the fleet; a continued session runs where it lives; `instance` runs on a private server. */
  | { kind: "task"; isolation?: Isolation; sessionId?: string; repo?: unknown }
  /** A batch of tasks (parallel); `worktree`: some of its tasks have isolation "worktree". */
  | { kind: "batch"; worktree?: boolean }
  /** A follow-up (wait, result, interrupt) by id: a session id, or with a queue a task or batch id. */
  | { kind: "id"; id: string };

export type Isolation = "shared" | "instance" | "worktree";

export function place(c: PlacementContext, request: PlacementRequest): Placement {
  switch (request.kind) {
    case "id":
      return c.queued && !isSessionId(request.id) ? "queue" : "here";
    case "batch":
      if (c.queued && request.worktree)
        throw new UsageError(
          'isolation "worktree" runs on this machine, not on the fleet\'s queue: leave it out of a batch for the fleet (its `repo` tasks get worktrees of their own).',
        );
      return c.queued ? "queue" : "here";
    case "task":
      // Worktrees are made on this machine, so a configured queue does not take these.
      if (request.isolation === "worktree") {
        if (request.repo !== undefined) throw new UsageError('`repo` tasks run on the fleet\'s workers, not with isolation "worktree": leave one out.');
        if (request.sessionId !== undefined)
          throw new UsageError(
            'isolation "worktree" starts a new session in a new worktree: leave out sessionId (continue a worktree task\'s session without isolation).',
          );
        if (!c.instances) throw new UsageError('isolation "worktree" needs private instances: create the Conductor with `instances` (an InstanceManager).');
        return "worktree";
      }
      if (request.isolation === "instance") {
        if (request.repo !== undefined) throw new UsageError('`repo` tasks run on the fleet\'s workers, not with isolation "instance": leave one out.');
        if (!c.instances) throw new UsageError('isolation "instance" needs private instances: create the Conductor with `instances` (an InstanceManager).');
        return "instance";
      }
      // A continued session runs on the server that holds it; new work is a job for the fleet.
      if (c.queued && request.sessionId === undefined) return "queue";
      if (request.repo !== undefined)
        throw new UsageError("`repo` tasks run on the fleet's workers: configure a queue (OPENCODE_CONDUCTOR_QUEUE, or `queue: { url }`).");
      return "here";
  }
}
