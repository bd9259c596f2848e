// parallel() against the real opencode: twelve sessions at once with one failing, and an overall
// timeout that leaves the slow tasks running. Sessions are created inside parallel(), so the steps
// go on the shared model queue; any task may get any step.
import { describe, expect, it } from "vitest";
import { dumpMessages, useConductor } from "../../support/conductor.js";
import { httpError, text, times } from "../../support/scripted-model.js";

const h = useConductor();

const titleOf = async (sessionId: string) => (await h.conductor.client.call("session.get", { path: { sessionID: sessionId } })).title;

describe("parallel (e2e)", () => {
  it("runs 12 tasks at once: 11 done, 1 error (a 400 from the model), results in input order", async () => {
    h.oc.model.queue(times(5, text("ok", { delayMs: 300 })), httpError(400), times(6, text("ok", { delayMs: 300 })));
    const tasks = Array.from({ length: 12 }, (_, i) => ({ task: `task number ${i}`, title: `task-${i}` }));
    const batch = await h.conductor.parallel(tasks);

    expect(batch.counts).toEqual({ done: 11, error: 1 });
    expect(batch.running).toEqual([]);
    expect(batch.results.map((r) => r.index)).toEqual(tasks.map((_, i) => i));
    const failed = batch.results.filter((r) => r.status === "error");
    expect(failed).toEqual([expect.objectContaining({ error: { name: "APIError", message: "Bad request", statusCode: 400 } })]);
    for (const r of batch.results.filter((x) => x.status === "done")) expect(r.answer).toBe("ok");
    await dumpMessages(h, "error-400", failed[0]!.sessionId!);

    const ids = batch.results.map((r) => r.sessionId!);
    expect(new Set(ids).size).toBe(12);
    expect(await Promise.all(ids.map(titleOf))).toEqual(tasks.map((t) => t.title));
    // Every session asked the model exactly once: a 400 is not retried.
    for (const id of ids) expect(h.oc.model.requestsFor(id)).toHaveLength(1);
  });

  it("an overall timeout returns the finished tasks and leaves the others running, with their ids", async () => {
    h.oc.model.queue(text("quick"), text("slow", { delayMs: 120_000 }), text("slow", { delayMs: 120_000 }));
    const batch = await h.conductor.parallel(
      [0, 1, 2].map((i) => ({ task: `timed task ${i}`, title: `timed-${i}` })),
      { timeoutMs: 20_000 },
    );
    expect(batch.counts).toEqual({ done: 1, running: 2 });
    const running = batch.results.filter((r) => r.status === "running").map((r) => r.sessionId!);
    expect(batch.running).toEqual(running);
    for (const id of running) {
      expect((await h.conductor.result(id)).state).toBe("busy");
      expect(await h.conductor.interrupt(id)).toMatchObject({ wasRunning: true, status: "interrupted" });
    }
  });

  it("rejects an empty batch and a concurrency out of range", async () => {
    await expect(h.conductor.parallel([])).rejects.toThrow(/tasks/);
    await expect(h.conductor.parallel([{ task: "x" }], { concurrency: 51 })).rejects.toThrow(/concurrency/);
  });
});
