// The `subagent-requests` recordings of both majors (`npm run record -- subagent-requests`, and with
// `--v2`), read by test/unit/core/turns/blocking-requests.test.ts. Three top-level sessions, each
// with a sub-agent (1.x `task`, 2.x `subagent`) whose permission waits:
// - the root (titled with the scenario's name) asks for itself and starts two sub-agents in the same
//   step: one asks, the other asks nothing and starts a sub-agent of its own (nesting allowed to
//   depth 2), which asks: requests at depth 0, 1 and 2, the deepest found only through a session
//   that has none;
// - `unrelated`: its sub-agent asks;
// - `deleted`: its sub-agent asks, and the session is deleted between the first listing of the
//   requests and the reads of their sessions, as a user may delete one at any moment.
// While they wait, the recording holds the sessions listed (with their parents) before and after
// the deletion, and the calls of `blockingRequests` below, on the real engine: each one's listing
// of the requests and its reads of sessions, as opencode answered them.
import type { Engine } from "../../../src/core/engine/engine.js";
import type { PendingRequest } from "../../../src/core/model/pending-request.js";
import { blockingRequests } from "../../../src/core/turns/blocking-requests.js";

export const SUBAGENT_SCENARIO = "subagent-requests";
export const UNRELATED_TITLE = "unrelated";
export const DELETED_TITLE = "deleted";

export interface SubagentSessions {
  root: string;
  unrelated: string;
  /** Every session that asked, in the order they asked. */
  asking: string[];
}

/**
 * The sessions each recorded call of `blockingRequests` follows, in order: the root (twice: the
 * second call reads only what the first could not keep), the unrelated session, and every session
 * that asked (nothing left to read). The unit test replays the same calls.
 */
export const blockingCalls = (s: SubagentSessions): string[][] => [[s.root], [s.root], [s.unrelated], s.asking];

/**
 * Records the calls on `engine`; during the first one, `deleted` is removed once the requests
 * were listed, before any session is read.
 */
export async function recordBlockingCalls(engine: Engine, s: SubagentSessions, deleted: string): Promise<Array<{ requests: PendingRequest[] }>> {
  const results = [];
  for (const [i, sessions] of blockingCalls(s).entries()) {
    const racing: Pick<Engine, "listPending" | "getSession"> = {
      listPending: async () => {
        const open = await engine.listPending();
        await engine.remove(deleted);
        return open;
      },
      getSession: (id) => engine.getSession(id),
    };
    results.push(await blockingRequests(i === 0 ? racing : engine, sessions));
  }
  return results;
}
