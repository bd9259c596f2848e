// Which open requests block a turn (blocking-requests.ts): its session's, and those of the sub-agent
// sessions below it at any depth, found from each request's session's parents; a session's parent
// is read once; a session deleted meanwhile is not ours; a server that does not answer fails the read.
// The real sessions and requests: test/e2e/core/subagents.test.ts, test/e2e-v2/subagents.test.ts.
import { describe, expect, it, vi } from "vitest";
import { ConnectionError, NotFoundError } from "../../../../src/client/errors.js";
import type { Session } from "../../../../src/core/model/session.js";
import type { PendingRequest } from "../../../../src/core/model/pending-request.js";
import { blockingRequests } from "../../../../src/core/turns/blocking-requests.js";

const permission = (id: string, sessionId: string): PendingRequest => ({
  kind: "permission",
  id,
  sessionId,
  permission: "bash",
  patterns: [],
  always: [],
  metadata: {},
});

/** A server with these sessions (id → parent) and these open requests; counts the session reads. */
function server(parents: Record<string, string | undefined>, open: PendingRequest[]) {
  const getSession = vi.fn(async (id: string): Promise<Session> => {
    if (!(id in parents)) throw new NotFoundError(`no session ${id}`, 404);
    return { id, title: id, directory: "/p", time: { created: 0, updated: 0 }, ...(parents[id] ? { parentId: parents[id] } : {}) } as Session;
  });
  return { listPending: vi.fn(async () => open), getSession };
}

describe("the requests that block a turn", () => {
  it("its own and its sub-agents' at any depth, not another session's; each parent read once", async () => {
    const engine = server({ ses_a_child: "ses_a", ses_a_grandchild: "ses_a_child", ses_b: undefined, ses_b_child: "ses_b" }, [
      permission("per_own", "ses_a"),
      permission("per_grandchild", "ses_a_grandchild"),
      permission("per_other", "ses_b_child"),
      permission("per_child", "ses_a_child"),
    ]);
    const found = await blockingRequests(engine, ["ses_a"]);
    expect(found.requests.map((r) => r.id)).toEqual(["per_own", "per_grandchild", "per_child"]);
    expect(found.descendants).toEqual(["ses_a_grandchild", "ses_a_child"]);
    const reads = engine.getSession.mock.calls.length;
    expect(await blockingRequests(engine, ["ses_a"])).toEqual(found);
    expect(engine.getSession.mock.calls.length).toBe(reads);
  });

  it("reads nothing while only followed sessions wait; a deleted session is not ours; no answer fails", async () => {
    const quiet = server({}, [permission("per_own", "ses_q")]);
    expect((await blockingRequests(quiet, ["ses_q"])).requests).toHaveLength(1);
    expect(quiet.getSession).not.toHaveBeenCalled();

    const deleted = server({}, [permission("per_gone", "ses_deleted")]);
    expect(await blockingRequests(deleted, ["ses_q"])).toEqual({ requests: [], descendants: [] });

    const silent = server({}, [permission("per_x", "ses_unread")]);
    silent.getSession.mockRejectedValueOnce(new ConnectionError("no answer", "timeout", {}));
    await expect(blockingRequests(silent, ["ses_q"])).rejects.toThrow("no answer");
  });
});
