// Working with running sessions against the real opencode: background delegation, timeouts, queue
// and steer, interrupt, and result(). Each test delegates its own sessions and queues its model
// steps on the shared queue, in the order its requests will come; an afterEach checks it used them
// all, so no test depends on another's state.
import { afterEach, describe, expect, it } from "vitest";
import { dumpMessages, useConductor, userTexts } from "../../support/conductor.js";
import type { HubEvent } from "../../../src/core/event-hub.js";
import { httpError, text } from "../../support/scripted-model.js";

const h = useConductor();

/** Resolves with the first hub event that `match` accepts (subscribed before the caller acts). */
async function nextEvent(match: (e: HubEvent) => boolean): Promise<{ event: Promise<HubEvent>; stop: () => void }> {
  let found!: (e: HubEvent) => void;
  const event = new Promise<HubEvent>((resolve) => (found = resolve));
  const stop = await h.conductor.hub.subscribe((e) => match(e) && found(e));
  return { event, stop };
}

describe("control (e2e)", () => {
  afterEach(() => {
    expect(h.oc.model.leftovers(), "model steps this test queued but nothing used").toEqual({});
  });
  it("wait: false answers running at once; wait() gets the result", async () => {
    h.oc.model.queue(text("background done", { delayMs: 500 }));
    const r = await h.conductor.delegate({ task: "work in the background", wait: false });
    expect(r).toEqual({ sessionId: r.sessionId, status: "running", answer: "", directory: h.oc.directory });
    expect(await h.conductor.wait(r.sessionId, { timeoutMs: 90_000 })).toMatchObject({ status: "done", answer: "background done" });
  });

  it("a timeout answers running and the turn goes on; a later wait() gets the result", async () => {
    h.oc.model.queue(text("late", { delayMs: 6000 }));
    const r = await h.conductor.delegate({ task: "slow one", timeoutMs: 1500 });
    expect(r.status).toBe("running");
    const state = await h.conductor.result(r.sessionId);
    expect(state).toMatchObject({ state: "busy", last: { status: "running" } });
    expect(await h.conductor.wait(r.sessionId, { timeoutMs: 90_000 })).toMatchObject({ status: "done", answer: "late" });
    expect(await h.conductor.result(r.sessionId)).toMatchObject({ state: "idle", last: { status: "done", answer: "late" } });
  });

  it("queue: a message sent while a turn runs runs after it; the second answer is the last", async () => {
    h.oc.model.queue(text("first answer", { delayMs: 1500 }), text("second answer"));
    const r = await h.conductor.delegate({ task: "first task", wait: false });
    await h.oc.model.waitForRequests(1, { sessionId: r.sessionId, timeoutMs: 60_000 });
    const queued = await h.conductor.send(r.sessionId, "second task", { delivery: "queue" });
    expect(queued).toMatchObject({ sessionId: r.sessionId, status: "running", delivery: "queue" });
    const done = await h.conductor.wait(r.sessionId, { timeoutMs: 90_000, detail: "full" });
    expect(done).toMatchObject({ status: "done", answer: "second answer" });
    expect(done.transcript?.[0]).toEqual({ role: "user", text: "second task" });
    expect(h.oc.model.requestsFor(r.sessionId).map((q) => q.step)).toEqual(['text("first answer") after 1500ms', 'text("second answer")']);
    expect(userTexts(h.oc, r.sessionId)).toEqual([expect.stringContaining("first task"), expect.stringContaining("second task")]);
    await dumpMessages(h, "queued", r.sessionId);
  });

  it("queue with wait: true waits for the queued turn, not the running one", async () => {
    h.oc.model.queue(text("one", { delayMs: 1500 }), text("two"));
    const r = await h.conductor.delegate({ task: "turn one", wait: false });
    await h.oc.model.waitForRequests(1, { sessionId: r.sessionId, timeoutMs: 60_000 });
    const done = await h.conductor.send(r.sessionId, "turn two", { delivery: "queue", wait: true, timeoutMs: 90_000 });
    expect(done).toMatchObject({ status: "done", answer: "two", delivery: "queue" });
  });

  it("steer: interrupts the running turn and continues with the new instruction, history kept", async () => {
    h.oc.model.queue(text("never sent", { delayMs: 60_000 }), text("steered answer"));
    const r = await h.conductor.delegate({ task: "long task", wait: false });
    const [slow] = await h.oc.model.waitForRequests(1, { sessionId: r.sessionId, timeoutMs: 60_000 });
    const done = await h.conductor.send(r.sessionId, "do this instead", { delivery: "steer", timeoutMs: 90_000 });
    expect(done).toMatchObject({ status: "done", answer: "steered answer", delivery: "steer" });
    expect(slow!.clientClosed).toBe(true);
    expect(userTexts(h.oc, r.sessionId)).toEqual([expect.stringContaining("long task"), expect.stringContaining("do this instead")]);
  });

  it("interrupt stops a running turn; a waiter sees it interrupted", async () => {
    h.oc.model.queue(text("never sent", { delayMs: 60_000 }));
    const r = await h.conductor.delegate({ task: "endless", wait: false });
    await h.oc.model.waitForRequests(1, { sessionId: r.sessionId, timeoutMs: 60_000 });
    const waiting = h.conductor.wait(r.sessionId, { timeoutMs: 90_000 });
    const stopped = await h.conductor.interrupt(r.sessionId);
    expect(stopped).toMatchObject({ sessionId: r.sessionId, status: "interrupted", wasRunning: true });
    expect(await waiting).toMatchObject({ status: "interrupted" });
    expect((await h.conductor.result(r.sessionId)).state).toBe("idle");
    await dumpMessages(h, "interrupted", r.sessionId);
  });

  it("queue, then interrupt: the running turn stops and 1.x drops the queued message unanswered; the next prompt's turn answers only that prompt, the dropped one in its context", async () => {
    h.oc.model.queue(text("never sent", { delayMs: 60_000 }), text("third answer"));
    const r = await h.conductor.delegate({ task: "long task", wait: false });
    await h.oc.model.waitForRequests(1, { sessionId: r.sessionId, timeoutMs: 60_000 });
    const recorded = await nextEvent((e) => {
      const info = (e as { properties?: { info?: { role?: string; sessionID?: string } } }).properties?.info;
      return e.type === "message.updated" && info?.role === "user" && info.sessionID === r.sessionId;
    });
    await h.conductor.send(r.sessionId, "queued task", { delivery: "queue" });
    await recorded.event; // its user message is on record (prompt_async answers before it writes it)
    recorded.stop();
    expect(await h.conductor.interrupt(r.sessionId)).toMatchObject({ wasRunning: true });
    expect(await h.conductor.send(r.sessionId, "third task", { delivery: "queue", wait: true, timeoutMs: 90_000 })).toMatchObject({
      status: "done",
      answer: "third answer",
    });
    const messages = await h.conductor.engine.messages(r.sessionId);
    const users = messages.filter((m) => m.info.role === "user");
    const parents = messages.flatMap((m) => (m.info.role === "assistant" ? [m.info.parentID] : []));
    expect(users.map((m) => m.parts.find((p) => p.type === "text")?.text)).toEqual(["long task", "queued task", "third task"]);
    expect(parents).toEqual([users[0]!.info.id, users[2]!.info.id]);
    const replies = messages.filter((m) => m.info.role === "assistant").map((m) => (m.info as { error?: { name: string } }).error?.name);
    expect(replies).toEqual(["MessageAbortedError", undefined]);
    expect(h.oc.model.requestsFor(r.sessionId)).toHaveLength(2);
    expect(userTexts(h.oc, r.sessionId)).toEqual([
      expect.stringContaining("long task"),
      expect.stringContaining("queued task"),
      expect.stringContaining("third task"),
    ]);
  });

  it("interrupting an idle session changes nothing and reports no new turn", async () => {
    h.oc.model.queue(text("finished"));
    const r = await h.conductor.delegate({ task: "quick" });
    const requests = h.oc.model.requests.length;
    const stopped = await h.conductor.interrupt(r.sessionId);
    expect(stopped).toMatchObject({ wasRunning: false, status: "done", answer: "finished", messageId: r.messageId });
    expect(h.oc.model.requests.length).toBe(requests);
  });

  it("result() of a session in retry shows the attempt; wait() then gets the recovered answer", async () => {
    h.oc.model.queue(httpError(500, { retryAfterMs: 4000 }), text("recovered"));
    const retrying = await nextEvent((e) => e.type === "session.status" && e.properties.status.type === "retry");
    try {
      const r = await h.conductor.delegate({ task: "flaky", wait: false });
      await retrying.event;
      const state = await h.conductor.result(r.sessionId);
      expect(state).toMatchObject({ state: "retry", retry: { attempt: 1 }, last: { status: "running" } });
      expect(await h.conductor.wait(r.sessionId, { timeoutMs: 90_000 })).toMatchObject({ status: "done", answer: "recovered" });
    } finally {
      retrying.stop();
    }
  });
});
