// Which open requests block a turn (blocking-requests.ts): its session's, and those of the sub-agent
// sessions below it at any depth, found from each request's session's parents; a session's parent
// is read once; a session deleted meanwhile is not ours, and not remembered.
// On the `subagent-requests` recordings of opencode 1.x and 2.x (`npm run record -- subagent-requests`,
// and with `--v2`; test/support/recording/subagent-requests.ts), replayed to each major's real
// engine: the root asks at depth 0, its sub-agent at depth 1, that one's sub-agent at depth 2; an
// unrelated session's sub-agent asks; a deleted session's sub-agent had asked. The test makes the
// recorded calls in the recorded order, and what each call must find comes from opencode's record
// in the same recording: the requests as the server listed them for that call, and each session's
// parent as the server listed the sessions (a session it no longer lists is deleted). A read the
// recording does not hold (a parent read twice, a call reading more than it did) fails the test.
import { describe, expect, it, vi } from "vitest";
import { ConnectionError } from "../../../../src/client/errors.js";
import type { Engine } from "../../../../src/core/engine/engine.js";
import type { Fixture } from "../../../support/fixture.js";
import { REPLAY_DIRECTORY, REPLAY_URL, useReplay, useV2Replay, type V2Replay } from "../../../support/replay.js";
import { blockingCalls, DELETED_TITLE, SUBAGENT_SCENARIO, UNRELATED_TITLE } from "../../../support/recording/subagent-requests.js";

interface Listed {
  id: string;
  sessionID: string;
}
interface ListedSession {
  id: string;
  parentID?: string;
  title: string;
}

/** How each major's record names what this test reads from it. */
const RECORD = {
  "1.x": { sessions: "session.list", requests: ["permission.list", "question.list"], body: <T>(b: unknown) => b as T[] },
  "2.x": { sessions: "v2.session.list", requests: ["v2.permission.request.list", "v2.form.request.list"], body: <T>(b: unknown) => (b as { data: T[] }).data },
} as const;
type Major = keyof typeof RECORD;

/** opencode's record in the recording: the sessions before and after the deletion, and each call's listing of open requests. */
function recorded(major: Major, fixture: Fixture) {
  const r = RECORD[major];
  const bodies = (op: string) => fixture.interactions.filter((i) => i.operationId === op).map((i) => r.body<unknown>(i.body));
  const [before, after] = bodies(r.sessions) as ListedSession[][];
  // The engine lists permissions, then questions (2.x: forms), once per call.
  const [permissions, questions] = r.requests.map((op) => bodies(op) as Listed[][]);
  const listings = permissions!.map((listed, i) => [...listed, ...questions![i]!]);
  const titled = (title: string) => before!.find((s) => s.title === title)!.id;
  const parent = new Map(after!.map((s) => [s.id, s.parentID]));
  /** The session's depth below `root` by the listed parents; undefined when it does not descend from it. */
  const depthBelow = (id: string, root: string) => {
    let depth = 0;
    for (let at: string | undefined = id; at; at = parent.get(at), depth++) if (at === root) return depth;
    return undefined;
  };
  return {
    root: titled(SUBAGENT_SCENARIO),
    unrelated: titled(UNRELATED_TITLE),
    deleted: titled(DELETED_TITLE),
    listings,
    /** Sessions listed before the deletion that the server no longer lists. */
    gone: before!.filter((s) => !parent.has(s.id)).map((s) => s.id),
    depthBelow,
    parentOf: (id: string) => parent.get(id),
    /** What a call following `root` must find in `listing`: the requests of `root` and of the sessions below it, in the listing's order. */
    blocking(listing: Listed[], root: string) {
      const requests = listing.filter((r) => depthBelow(r.sessionID, root) !== undefined);
      return {
        requests: requests.map((r) => [r.id, r.sessionID]),
        descendants: [...new Set(requests.map((r) => r.sessionID).filter((s) => s !== root))],
      };
    },
  };
}

/**
 * A fresh `blockingRequests` (its parents cache is the module's: each test starts with none) on a
 * fresh engine of the major, connected to the replay, with the sessions each call reads.
 */
async function fresh(major: Major, v2: V2Replay) {
  vi.resetModules();
  const { blockingRequests } = await import("../../../../src/core/turns/blocking-requests.js");
  const reads: string[] = [];
  const fetch = (request: Request) => {
    const read = request.method === "GET" && /^(?:\/api)?\/session\/(ses_[^/]+)$/.exec(new URL(request.url).pathname);
    if (read) reads.push(read[1]!);
    return globalThis.fetch(request);
  };
  let engine: Engine;
  if (major === "1.x") {
    const { connect } = await import("../../../../src/client/index.js");
    const { V1Engine } = await import("../../../../src/core/engine/v1/v1-engine.js");
    engine = new V1Engine(connect({ url: REPLAY_URL, directory: REPLAY_DIRECTORY, fetch }));
  } else {
    const { connectV2 } = await import("../../../../src/client/v2/index.js");
    const { V2Engine } = await import("../../../../src/core/engine/v2/v2-engine.js");
    engine = new V2Engine(await connectV2({ ...v2.connectOptions, fetch }), REPLAY_DIRECTORY);
  }
  return { engine, blockingRequests, reads };
}

const shape = (found: { requests: Array<{ id: string; sessionId: string }>; descendants: string[] }) => ({
  requests: found.requests.map((r) => [r.id, r.sessionId]),
  descendants: found.descendants,
});

describe.each(["1.x", "2.x"] as const)("the requests that block a turn, on opencode %s's record", (major) => {
  // Each describe serves its own recording; only the one of the major runs requests here.
  const replay = major === "1.x" ? useReplay(SUBAGENT_SCENARIO) : useV2Replay(SUBAGENT_SCENARIO);
  const v2 = replay as V2Replay;
  const rec = recorded(major, replay.fixture);
  const asking = [...new Set(rec.listings[0]!.map((r) => r.sessionID))];
  const calls = blockingCalls({ root: rec.root, unrelated: rec.unrelated, asking });

  /** Makes the recorded calls up to `upTo`, each with the sessions it read. */
  async function replayCalls(upTo: number) {
    const { engine, blockingRequests, reads } = await fresh(major, v2);
    const made = [];
    for (const sessions of calls.slice(0, upTo)) {
      const from = reads.length;
      const found = await blockingRequests(engine, sessions);
      made.push({ found: shape(found), reads: reads.slice(from) });
    }
    return made;
  }

  /** The sub-agent between the root and the depth-2 request: it asks nothing, so only its parent tells. */
  const between = () => rec.parentOf(rec.listings[0]!.find((r) => rec.depthBelow(r.sessionID, rec.root) === 2)!.sessionID)!;

  it("the record holds what the tests are about: requests at depth 0, 1 and 2 below the root, the unrelated session's sub-agent's, the deleted session's sub-agent's", () => {
    const first = rec.listings[0]!;
    expect(first.map((r) => rec.depthBelow(r.sessionID, rec.root)).sort()).toEqual([0, 1, 2, undefined, undefined]);
    expect(first.map((r) => r.sessionID)).not.toContain(between());
    expect(first.some((r) => rec.depthBelow(r.sessionID, rec.unrelated) === 1)).toBe(true);
    expect(rec.gone).toContain(rec.deleted);
    expect(first.some((r) => rec.gone.includes(r.sessionID))).toBe(true);
  });

  it("its own and its sub-agents' at any depth, in the server's order; not an unrelated session's sub-agent, nor a deleted session's", async () => {
    const [first] = await replayCalls(1);
    expect(first!.found).toEqual(rec.blocking(rec.listings[0]!, rec.root));
    expect(first!.found.requests).toHaveLength(3);
    // Every session read once: a request's session, then its parents until the root's sub-agent or the top.
    expect(first!.reads).toHaveLength(new Set(first!.reads).size);
    expect(first!.reads).not.toContain(rec.root);
    // The depth-2 request is found through the sub-agent between, which asked nothing.
    expect(first!.reads).toContain(between());
  });

  it("a parent read once is kept; a deleted session is read again at each call, never remembered", async () => {
    const [first, second] = await replayCalls(2);
    expect(second!.found).toEqual(rec.blocking(rec.listings[1]!, rec.root));
    expect(second!.found).toEqual(first!.found);
    // What the second call reads: only the sessions of listed requests the server no longer has.
    // (1.x keeps listing a deleted sub-agent's permission; 2.x drops it with the session.)
    const listedGone = rec.listings[1]!.map((r) => r.sessionID).filter((s) => rec.gone.includes(s));
    expect(second!.reads).toEqual(listedGone);
    expect(first!.reads.filter((s) => rec.gone.includes(s))).not.toEqual([]);
  });

  it("another turn's session: its sub-agent's request, without reading again a parent read for the first", async () => {
    const [first, second, third] = await replayCalls(3);
    expect(third!.found).toEqual(rec.blocking(rec.listings[2]!, rec.unrelated));
    expect(third!.found.requests).toHaveLength(1);
    const kept = [...first!.reads, ...second!.reads].filter((s) => !rec.gone.includes(s));
    expect(third!.reads.filter((s) => kept.includes(s))).toEqual([]);
  });

  it("reads no session while only followed sessions wait", async () => {
    const fourth = (await replayCalls(4))[3]!;
    expect(fourth.found).toEqual({ requests: rec.listings[3]!.map((r) => [r.id, r.sessionID]), descendants: [] });
    expect(fourth.reads).toEqual([]);
  });

  it("a server that does not answer a read fails the call", async () => {
    // Not from the recording: a read that got no answer is not recorded. The listing is replayed;
    // the session read throws as the client does on a timeout.
    const { engine, blockingRequests } = await fresh(major, v2);
    const silent = { listPending: () => engine.listPending(), getSession: () => Promise.reject(new ConnectionError("no answer", "timeout", {})) };
    await expect(blockingRequests(silent, [rec.root])).rejects.toThrow("no answer");
  });
});
