// A turn whose opencode hangs (SIGSTOP) and then goes on, on the traffic recorded from the real
// opencode 1.18.33 (`npm run record -- server-stopped`): the stream before the stop, the one
// opened during it (answered at SIGCONT), the reads of the reconnect, the turn's end. The fetch
// below plays the stop: while stopped, every new request waits (as a stopped server's kernel keeps
// them) until the test continues it; the clock is faked, so the 35 s of silence pass at once.
// - timeout 120 s: the wait answers `unreachable` once the stream is silent and two health checks
//   get no answer (about 37 s), with the session id, not `lost`; after the continue the kept watch
//   re-reads and a later wait says `done`, as the recorded messages say;
// - timeout 10 s: the answer comes at 10 s plus the answer margin, `unreachable`, with the session
//   id, although the summary's read of the messages never answered.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connect } from "../../../../src/client/index.js";
import type { CoreContext } from "../../../../src/core/context.js";
import { V1Engine } from "../../../../src/core/engine/v1/v1-engine.js";
import { EventHub } from "../../../../src/core/event-hub.js";
import { ANSWER_MARGIN_MS } from "../../../../src/core/turns/deadline.js";
import { runTurn, waitForSession } from "../../../../src/core/turns/turn.js";
import { STOPPED_ANSWER } from "../../../support/recording/scenarios.js";
import { isEventStream } from "../../../support/fixture.js";
import { useReplay, type Replay } from "../../../support/replay.js";
import { createSession, SCRIPTED_MODEL } from "../../../support/turns.js";

/** A fetch to the replay that can be stopped: new requests then wait until it continues (or their caller gives up). */
function stoppable() {
  let stopped = false;
  const held = new Set<() => void>();
  const paths: string[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    if (stopped) {
      paths.push(new URL(request.url).pathname);
      await new Promise<void>((resolve, reject) => {
        const release = () => (held.delete(release), resolve());
        held.add(release);
        request.signal.addEventListener("abort", () => (held.delete(release), reject(request.signal.reason)), { once: true });
      });
    }
    return globalThis.fetch(request);
  };
  return {
    fetch,
    /** Paths requested while stopped. */
    paths,
    stop: () => (stopped = true),
    go: () => {
      stopped = false;
      for (const release of [...held]) release();
    },
  };
}

function contextOn(replay: Replay, gate: ReturnType<typeof stoppable>): CoreContext {
  const client = connect({ url: replay.baseUrl, directory: replay.directory, fetch: gate.fetch });
  const engine = new V1Engine(client);
  return { engine, hub: new EventHub(engine), settings: {} };
}

/** Starts the turn and resolves once the first stream delivered every event it recorded (the stop comes after them). */
async function startTurn(replay: Replay, ctx: CoreContext, timeoutMs: number) {
  const firstStream = replay.fixture.interactions.find((i) => isEventStream(i.contentType))!;
  let told = 0;
  const stopListening = await ctx.hub.subscribe(() => void told++);
  const session = await createSession((ctx.engine as V1Engine).client, "server stopped");
  const startedAt = Date.now();
  let answeredAt: number | undefined;
  const turn = runTurn(ctx, session.id, () => ctx.engine.prompt(session.id, { text: "answer after a stop", model: SCRIPTED_MODEL }, () => undefined), {
    fresh: true,
    timeoutMs,
  }).finally(() => (answeredAt = Date.now()));
  await vi.waitFor(() => expect(told).toBe(firstStream.events!.length));
  stopListening();
  return { sessionId: session.id, turn, startedAt, answeredAt: () => answeredAt };
}

beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: true, toFake: ["setTimeout", "clearTimeout", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("opencode stopped under a turn, timeout 120 s (server-stopped)", () => {
  const replay = useReplay("server-stopped");

  it("answers unreachable once the server does not answer, keeps the turn, and a later wait says done as recorded", async () => {
    const gate = stoppable();
    const ctx = contextOn(replay, gate);
    const t = await startTurn(replay, ctx, 120_000);
    gate.stop();
    await vi.advanceTimersByTimeAsync(37_500);
    expect(t.answeredAt(), "answered once the stream was silent and two health checks got no answer").toBeDefined();
    const unreachable = await t.turn;
    expect(t.answeredAt()! - t.startedAt).toBeLessThan(120_000 + ANSWER_MARGIN_MS);
    expect(unreachable).toMatchObject({ sessionId: t.sessionId, status: "unreachable", error: { name: "ServerUnreachable" } });
    expect(unreachable.error!.message).toMatch(/outcome is unknown and may still come/);
    expect(unreachable.error!.message).not.toMatch(/never/);
    // What the events told before the stop: our prompt, a reply not finished (nothing claims an end).
    expect(unreachable.answer).toBe("");
    expect(gate.paths).toEqual(expect.arrayContaining(["/global/health", "/global/event"]));

    // SIGCONT: the reconnect waiting since the silence is answered; the kept watch re-reads and follows the end.
    gate.go();
    const later = await waitForSession(ctx, t.sessionId, { timeoutMs: 30_000 });
    expect(later).toMatchObject({ sessionId: t.sessionId, status: "done", answer: STOPPED_ANSWER });
    // opencode's record: the last read of the session holds the reply, completed, with that answer.
    const reads = replay.fixture.interactions.filter((i) => i.operationId === "session.messages");
    const last = (reads.at(-1)!.body as Array<{ info: { role: string; time: { completed?: number } }; parts: Array<{ type: string; text?: string }> }>).at(-1)!;
    expect(last.info.role).toBe("assistant");
    expect(last.info.time.completed).toBeDefined();
    expect(last.parts.filter((p) => p.type === "text").map((p) => p.text)).toEqual([later.answer]);
    ctx.hub.close();
  });
});

describe("opencode stopped under a turn, timeout 10 s (server-stopped)", () => {
  // The summary's read that never answered is answered after the continue: the recorded state again.
  const replay = useReplay("server-stopped", { repeatReads: true });

  it("answers at the timeout plus the margin, unreachable, with the session id", async () => {
    const gate = stoppable();
    const ctx = contextOn(replay, gate);
    const t = await startTurn(replay, ctx, 10_000);
    gate.stop();
    await vi.advanceTimersByTimeAsync(10_000 + ANSWER_MARGIN_MS + 100);
    expect(t.answeredAt(), "answered although the summary's read never answered").toBeDefined();
    const summary = await t.turn;
    expect(t.answeredAt()! - t.startedAt).toBeLessThanOrEqual(10_000 + ANSWER_MARGIN_MS + 100);
    expect(summary).toMatchObject({ sessionId: t.sessionId, status: "unreachable", error: { name: "ServerUnreachable" } });
    expect(summary.error!.message).toMatch(/session\.messages/);
    expect(gate.paths).toContain(`/session/${t.sessionId}/message`);
    gate.go();
    ctx.hub.close();
  });
});
