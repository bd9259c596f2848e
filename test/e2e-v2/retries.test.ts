// A model that fails every attempt on a real opencode 2.x server: how many retries, and how the turn
// ends. Its own file (and server) because the retries take about 30 s: it runs beside the others.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startV2Fixture, type V2Fixture } from "../support/opencode2.js";
import { httpError, times } from "../support/scripted-model.js";
import { isOutcome } from "../support/v2-events.js";

let v2: V2Fixture;
beforeAll(async () => {
  v2 = await startV2Fixture();
});
afterAll(() => v2?.stop());

describe("retries exhausted", () => {
  it("500 on every attempt: 4 retries (about 2, 4, 8, 16 s apart), then session.execution.failed with the last error", async () => {
    const id = await v2.newSession("http-500-exhausted");
    v2.server.model.forSession(id).queue(times(6, httpError(500)));
    const from = v2.log.events.length;
    await v2.client.request("session.prompt", { path: { sessionID: id }, body: { text: "x" } });
    const outcome = await v2.log.waitFor(isOutcome(id), { after: from, timeoutMs: 90_000 });
    const sequence = v2.log.sequence(id, from);
    expect(outcome).toMatchObject({ type: "session.execution.failed", data: { error: { type: "provider.internal", status: 500 } } });
    const retries = v2.log.of(id).filter((e) => e.type === "session.retry.scheduled");
    expect(retries.map((e) => e.data.attempt)).toEqual([2, 3, 4, 5]);
    expect(v2.server.model.requestsFor(id).filter((r) => r.kind === "chat")).toHaveLength(5);
    expect(sequence.slice(-2)).toEqual(["session.step.failed", "session.execution.failed"]);
    const assistant = (await v2.messages(id))[1]!;
    expect(assistant).toMatchObject({ finish: "error", error: { type: "provider.internal", status: 500 } });
    const at = retries.map((e) => e.data.at as number);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]!).toBeGreaterThan(gaps[i - 1]!); // backoff grows
  });
});
