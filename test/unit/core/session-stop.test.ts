// Status, abort and delete on the fake opencode replaying the "session-stop" recording
// (`npm run record -- session-stop`): opencode 1.18.33 with a hung turn (busy), a rate-limited
// turn (retry) and an idle session. opencode answers the status reads in the recorded order, so
// each test first makes the calls recorded before its own.
import { describe, expect, it } from "vitest";
import type { CoreContext } from "../../../src/core/context.js";
import type { EventHub } from "../../../src/core/event-hub.js";
import { abortSession, deleteSession } from "../../../src/core/sessions/actions.js";
import { sessionInfo } from "../../../src/core/sessions/info.js";
import { V1Engine } from "../../../src/core/engine/v1/v1-engine.js";
import { useReplay } from "../../support/replay.js";

const replay = useReplay("session-stop", { repeatReads: true });
const [BUSY, RETRYING, IDLE] = ["ses_0001", "ses_0002", "ses_0003"];

function fakeContext() {
  const { client, seen: requests } = replay.connectSeen();
  // The hub only subscribes: the status reads decide, as they did in the recording.
  const hub = { subscribe: async () => () => undefined } as unknown as EventHub;
  const ctx: CoreContext = { engine: new V1Engine(client), hub, settings: {} };
  return { ctx, seen: () => requests.map((r) => `${r.method} ${r.path}`) };
}

/** The recorded calls, in order; `upTo` of them are made. */
async function recordedCalls(ctx: CoreContext, upTo: number) {
  const steps = [
    () => sessionInfo(ctx, BUSY),
    () => abortSession(ctx, BUSY),
    () => sessionInfo(ctx, RETRYING),
    () => deleteSession(ctx, RETRYING),
    () => deleteSession(ctx, IDLE),
  ];
  const results: unknown[] = [];
  for (const step of steps.slice(0, upTo)) results.push(await step());
  return results;
}

describe("sessionInfo and abortSession on running turns", () => {
  it("reports busy, and abort says a turn was running", async () => {
    const { ctx, seen } = fakeContext();
    const [info, aborted] = await recordedCalls(ctx, 2);
    expect(info).toMatchObject({ id: BUSY, status: "busy" });
    expect(aborted).toEqual({ sessionId: BUSY, wasRunning: true });
    expect(seen().filter((s) => s === `POST /session/${BUSY}/abort`)).toHaveLength(1);
  });

  it("reports retry with opencode's attempt, message and next time", async () => {
    const { ctx } = fakeContext();
    const status = replay.fixture.interactions.find((i) => i.path === "/session/status" && JSON.stringify(i.body).includes("retry"))!.body as Record<
      string,
      { next: number }
    >;
    const info = (await recordedCalls(ctx, 3))[2];
    expect(info).toMatchObject({
      id: RETRYING,
      status: "retry",
      retry: { attempt: 1, message: "Rate limit exceeded", nextAt: new Date(status[RETRYING]!.next).toISOString() },
    });
  });
});

describe("deleteSession", () => {
  it("aborts a retrying session before deleting it", async () => {
    const { ctx, seen } = fakeContext();
    await recordedCalls(ctx, 3);
    const from = seen().length;
    expect(await deleteSession(ctx, RETRYING)).toEqual({ sessionId: RETRYING, deleted: true, aborted: true });
    const order = seen()
      .slice(from)
      .filter((k) => k.includes("abort") || k.startsWith("DELETE"));
    expect(order).toEqual([`POST /session/${RETRYING}/abort`, `DELETE /session/${RETRYING}`]);
  });

  it("deletes an idle session without aborting it", async () => {
    const { ctx, seen } = fakeContext();
    await recordedCalls(ctx, 4);
    expect(await deleteSession(ctx, IDLE)).toEqual({ sessionId: IDLE, deleted: true, aborted: false });
    expect(seen()).not.toContain(`POST /session/${IDLE}/abort`);
  });
});
