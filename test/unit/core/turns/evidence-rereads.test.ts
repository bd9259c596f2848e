// The turn watch's re-reads (src/core/turns/evidence-rereads.ts) on traffic recorded from the real
// opencode 1.18.33 (`npm run record`), replayed by msw, with the clock faked so the start grace
// passes at once:
// - end-unknown-agent: opencode answers 204 to a prompt for an unknown agent, then emits only two
//   session.error events (no user message, no status, no idle). The watch must re-read on its own
//   and end the turn with opencode's error, not wait for ever (it used to: nothing armed the re-read).
// - text-turn: while the events flow, the watch reads nothing (the event stream is the fast path).
// And the timing rules alone: when a read is due, given what the session said since the prompt.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { OpencodeClient } from "../../../../src/client/connect.js";
import type { CoreContext } from "../../../../src/core/context.js";
import { V1Engine } from "../../../../src/core/engine/v1/v1-engine.js";
import { EventHub } from "../../../../src/core/event-hub.js";
import { EvidenceRereads, SETTLE_MS, SILENT_START_MS, START_GRACE_MS } from "../../../../src/core/turns/evidence-rereads.js";
import { runTurn } from "../../../../src/core/turns/turn.js";
import { TEXT_ANSWER, UNKNOWN_AGENT } from "../../../support/recording/scenarios.js";
import { useReplay, type SeenRequest } from "../../../support/replay.js";
import { createSession, SCRIPTED_MODEL } from "../../../support/turns.js";

function contextOn(replay: ReturnType<typeof useReplay>): { ctx: CoreContext; client: OpencodeClient; seen: SeenRequest[] } {
  const { client, seen } = replay.connectSeen();
  const engine = new V1Engine(client);
  return { ctx: { engine, hub: new EventHub(engine), settings: {} }, client, seen };
}

const calls = (seen: SeenRequest[]) => seen.map((r) => `${r.method} ${r.path}`);

beforeEach(() => {
  // Real time still passes (msw and the replay's event pacing run on it); tests jump over the waits.
  vi.useFakeTimers({ shouldAdvanceTime: true, toFake: ["setTimeout", "clearTimeout", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a prompt opencode accepts and never runs (end-unknown-agent)", () => {
  const replay = useReplay("end-unknown-agent");

  it("re-reads after the start grace, twice, then ends with the session error opencode reported", async () => {
    const { ctx, client, seen } = contextOn(replay);
    const session = await createSession(client, "end-unknown-agent");
    let settled = false;
    const turn = runTurn(
      ctx,
      session.id,
      async () => {
        await ctx.engine.prompt(session.id, { text: "go", model: SCRIPTED_MODEL, agent: UNKNOWN_AGENT }, () => undefined);
      },
      { fresh: true },
    ).finally(() => (settled = true));

    await vi.waitFor(() => expect(calls(seen)).toContain(`POST /session/${session.id}/prompt_async`));
    // Both session errors arrive and still nothing decides: no user message, no idle, nothing busy.
    await vi.advanceTimersByTimeAsync(START_GRACE_MS - 1_000);
    expect(settled).toBe(false);
    expect(calls(seen).filter((c) => c === "GET /session/status")).toHaveLength(0);
    // The start grace runs out: a read (idle, nothing recorded), then one more after the settle time.
    await vi.advanceTimersByTimeAsync(1_000 + SETTLE_MS + 100);
    const summary = await turn;
    expect(calls(seen).filter((c) => c === "GET /session/status")).toHaveLength(2);
    expect(summary).toMatchObject({
      sessionId: session.id,
      status: "error",
      error: { name: "UnknownError", message: expect.stringContaining(`Agent not found: "${UNKNOWN_AGENT}"`) },
      answer: "",
    });
    // What opencode recorded, as the last re-read saw it: no message at all, the session idle.
    const reads = replay.fixture.interactions.filter((i) => i.operationId === "session.messages");
    expect(reads.at(-1)!.body).toEqual([]);
    expect(replay.fixture.interactions.findLast((i) => i.operationId === "session.status")!.body).toEqual({});
    ctx.hub.close();
  });
});

describe("a turn whose events flow (text-turn)", () => {
  const replay = useReplay("text-turn");

  it("ends on the events alone: no status or message read, before or after the start grace", async () => {
    const { ctx, client, seen } = contextOn(replay);
    const session = await createSession(client, "text turn");
    const summary = await runTurn(
      ctx,
      session.id,
      async () => {
        await ctx.engine.prompt(session.id, { text: "say hello", model: SCRIPTED_MODEL }, () => undefined);
      },
      { fresh: true, detail: "final" },
    );
    expect(summary).toEqual({ sessionId: session.id, status: "done", answer: TEXT_ANSWER });
    await vi.advanceTimersByTimeAsync(START_GRACE_MS + SETTLE_MS);
    expect(calls(seen)).toEqual(["POST /session", "GET /global/event", `POST /session/${session.id}/prompt_async`]);
    ctx.hub.close();
  });
});

describe("when a re-read is due", () => {
  const waiting = { phase: "waiting" as const, errored: false };

  it("after a silent start: SILENT_START_MS; an error brings it forward to START_GRACE_MS; busy disarms it", async () => {
    const due: number[] = [];
    const t0 = Date.now();
    const rereads = new EvidenceRereads(() => due.push(Date.now() - t0));
    rereads.prompted({ ...waiting, activity: undefined, promptedAt: t0 });
    await vi.advanceTimersByTimeAsync(START_GRACE_MS + SETTLE_MS);
    expect(due).toEqual([]); // nothing heard: a loaded opencode may take this long to start
    await vi.advanceTimersByTimeAsync(SILENT_START_MS - START_GRACE_MS - SETTLE_MS);
    expect(due).toHaveLength(1);
    expect(due[0]).toBeGreaterThanOrEqual(SILENT_START_MS);

    due.length = 0;
    const t1 = Date.now();
    rereads.prompted({ ...waiting, activity: undefined, promptedAt: t1 });
    await vi.advanceTimersByTimeAsync(1_000);
    rereads.update({ ...waiting, activity: undefined, promptedAt: t1, errored: true }); // e.g. "Agent not found"
    await vi.advanceTimersByTimeAsync(START_GRACE_MS);
    expect(due).toHaveLength(1);
    expect(due[0]! - (t1 - t0)).toBeLessThan(START_GRACE_MS + 500);

    due.length = 0;
    rereads.prompted({ ...waiting, activity: undefined, promptedAt: Date.now() });
    rereads.update({ ...waiting, activity: "busy", promptedAt: Date.now() });
    await vi.advanceTimersByTimeAsync(SILENT_START_MS + SETTLE_MS);
    expect(due).toEqual([]); // the session works: the events are trusted, nothing is read
  });

  it("a prompt queued behind another turn: its start grace counts from the idle that ends that turn, not from the prompt", async () => {
    const due: number[] = [];
    const t0 = Date.now();
    const rereads = new EvidenceRereads(() => due.push(Date.now() - t0));
    rereads.prompted({ ...waiting, activity: undefined, promptedAt: t0 });
    // The turn before it runs 15 s, then the session goes idle (the queued prompt has not started yet).
    await vi.advanceTimersByTimeAsync(15_000);
    const idleAt = Date.now();
    rereads.update({ ...waiting, activity: "idle", promptedAt: t0, idleSince: idleAt });
    await vi.advanceTimersByTimeAsync(START_GRACE_MS - 500);
    expect(due).toEqual([]); // counted from the prompt it would have read 2 s after the idle
    await vi.advanceTimersByTimeAsync(1_000);
    expect(due).toHaveLength(1);
    expect(due[0]! - (idleAt - t0)).toBeGreaterThanOrEqual(START_GRACE_MS);
  });

  it("settling: SETTLE_MS, not put off by later events", async () => {
    let fired = 0;
    const rereads = new EvidenceRereads(() => fired++);
    const idle = { activity: "idle" as const, phase: "settling" as const, promptedAt: Date.now(), errored: false };
    rereads.update(idle);
    await vi.advanceTimersByTimeAsync(SETTLE_MS - 500);
    rereads.update(idle);
    await vi.advanceTimersByTimeAsync(600);
    expect(fired).toBe(1);
  });
});
