// The permission requests and questions that block a turn: those of its session and of the
// sub-agent sessions it started, however deep. A sub-agent (1.x's `task` tool, 2.x's `subagent`)
// runs in a child session whose `parentID` is the turn's session; opencode asks the child's
// permissions and questions in the child session, and the parent's tool call waits on them, so
// they block the parent's turn (docs/opencode-behaviour.md §5). A watch that follows a turn from
// its prompt learns each child from its creation event (engine/v1/v1-signals.ts `child`); a watch
// that attached to a turn already running, one that missed events in a reconnect, and a read
// without a watch (result, pending) have not seen those events. So each open request of a session
// not followed has its session's parents read, until one is followed or there is none: nothing
// is read while no other session waits, and a session's parent never changes, so it is read once.
import { NotFoundError } from "../../client/errors.js";
import { BoundedMap } from "../bounded-map.js";
import type { Engine } from "../engine/engine.js";
import type { PendingRequest } from "../model/pending-request.js";

/** Session id → its parent's (null: a top-level session); ids are unique, and a parent is fixed at creation. */
const parents = new BoundedMap<string, string | null>(5_000);
/** Sub-agents nest one level by default (1.x denies `task` to sub-agents; 2.x `subagent_depth` 1); a loop must not spin. */
const MAX_DEPTH = 16;

export interface BlockingRequests {
  requests: PendingRequest[];
  /** Sessions found to descend from `sessions` (not among them): a watch follows them from now on. */
  descendants: string[];
}

/** The open requests of `sessions` and of their descendants, from the server's list (of the engine's directory). */
export async function blockingRequests(engine: Pick<Engine, "listPending" | "getSession">, sessions: Iterable<string>): Promise<BlockingRequests> {
  const ours = new Set(sessions);
  const open = await engine.listPending();
  const descendants: string[] = [];
  const requests: PendingRequest[] = [];
  for (const request of open) {
    if (!ours.has(request.sessionId) && !(await descends(engine, request.sessionId, ours))) continue;
    if (!ours.has(request.sessionId)) {
      ours.add(request.sessionId);
      descendants.push(request.sessionId);
    }
    requests.push(request);
  }
  return { requests, descendants };
}

async function descends(engine: Pick<Engine, "getSession">, sessionId: string, ancestors: ReadonlySet<string>): Promise<boolean> {
  let id: string | null = sessionId;
  for (let depth = 0; id && depth < MAX_DEPTH; depth++) {
    id = await parentOf(engine, id);
    if (id && ancestors.has(id)) return true;
  }
  return false;
}

async function parentOf(engine: Pick<Engine, "getSession">, id: string): Promise<string | null> {
  const known = parents.get(id);
  if (known !== undefined) return known;
  // A session deleted meanwhile is not one of ours (not remembered); a server that does not answer fails the read.
  const session = await engine.getSession(id).catch((error: unknown) => {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  });
  if (!session) return null;
  const parent = session.parentId ?? null;
  parents.set(id, parent);
  return parent;
}
