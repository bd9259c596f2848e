// A sub-agent that runs long or hangs, on opencode 1.x: while the child's model call is pending,
// opencode sends nothing about the parent or the child (only the stream's heartbeats), so a wait on
// the parent's turn goes quiet and re-reads the server (turns/quiet-rereads.ts, first after
// QUIET_FIRST_MS). The re-read finds the parent busy, its last reply unfinished and its `task` call
// running: the delegation stays `running` through it, for the waiting delegate and for a second
// conductor's result() and pending(); it ends `done` only once opencode recorded the parent's end.
// A sub-agent whose model never answers leaves the parent busy with its `task` call running: a
// delegate or wait that times out says `running` (never done or lost), as does a later result(),
// and an interrupt ends it as opencode records the abort. Every claim is compared with opencode's
// record re-read from the server. Facts: docs/opencode-behaviour.md §5.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Conductor } from "../../../src/core/conductor.js";
import { QUIET_FIRST_MS } from "../../../src/core/turns/quiet-rereads.js";
import { useConductor } from "../../support/conductor.js";
import { delay, hang, text, toolCall } from "../../support/scripted-model.js";

const h = useConductor();

const taskCall = (description: string) => toolCall("task", { description, prompt: `${description}, then say so`, subagent_type: "general" });

/** The conductor reads the server with the global fetch at call time: this log shows when it read a session. */
const reads: Array<{ at: number; url: string }> = [];
const realFetch = globalThis.fetch;
beforeAll(() => {
  globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    const method = input instanceof Request ? input.method : (init?.method ?? "GET");
    if (method === "GET") reads.push({ at: Date.now(), url });
    return realFetch(input, init);
  };
});
afterAll(() => {
  globalThis.fetch = realFetch;
});
// A test that failed must not leave its script to the next one.
beforeEach(() => h.oc.model.clear());
afterEach(() => {
  expect(h.oc.model.leftovers(), "model steps this test queued but nothing used").toEqual({});
});

/** opencode's record now: the parent's status, its messages and its one child with its status. */
async function recorded(sessionID: string) {
  const client = h.conductor.client;
  const [messages, children, status] = await Promise.all([
    client.call("session.messages", { path: { sessionID } }),
    client.call("session.children", { path: { sessionID } }),
    client.call("session.status"),
  ]);
  expect(children).toHaveLength(1);
  const child = children[0]!;
  const last = messages.at(-1)!;
  const lastText = last.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
  const task = messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" && p.tool === "task" ? [p.state] : [])));
  const prompt = messages.findLast((m) => m.info.role === "user")!.info.id;
  return { messages, last, lastText, task, prompt, child, parentStatus: status[sessionID]?.type ?? "idle", childStatus: status[child.id]?.type ?? "idle" };
}

/** The child's model request, once it arrived (the first one of a session other than the parent's). */
async function childRequest(parent: string, before: number) {
  const requests = await h.oc.model.waitForRequests(before + 2, { kind: "chat", timeoutMs: 30_000 });
  const request = requests.slice(before).find((r) => r.sessionId !== parent)!;
  expect(request).toBeDefined();
  return request;
}

const chats = () => h.oc.model.requests.filter((r) => r.kind === "chat").length;

describe("a sub-agent that runs long or hangs, on opencode 1.x (e2e)", () => {
  it("a child model call longer than the quiet: the quiet re-read finds the parent running, the delegation stays running, then ends done as recorded", async () => {
    const CHILD_MS = QUIET_FIRST_MS + 4_000;
    h.oc.model.queue(taskCall("take long"), delay(CHILD_MS, text("child took long")), text("parent done after the long child"));
    const before = chats();
    let endedAt = 0;
    const delegation = h.conductor.delegate({ task: "use a slow sub-agent", timeoutMs: 60_000 }).finally(() => (endedAt = Date.now()));
    const quietFrom = (await h.oc.model.waitForRequests(before + 2, { kind: "chat", timeoutMs: 30_000 }))[before + 1]!.at;
    const parent = h.oc.model.requests.filter((r) => r.kind === "chat")[before]!.sessionId!;
    await childRequest(parent, before);

    // The watch re-reads the parent after the quiet (heartbeats only); wait for that read.
    const quietRead = () => reads.find((r) => r.at >= quietFrom + QUIET_FIRST_MS - 500 && r.url.includes(`/session/${parent}/message`));
    await expect.poll(quietRead, { timeout: CHILD_MS - 1_000, interval: 100 }).toBeTruthy();
    const during = await recorded(parent);
    // opencode's record meanwhile: the parent busy, its last reply unfinished, its task call running; the child busy.
    expect(during).toMatchObject({ parentStatus: "busy", childStatus: "busy", task: [expect.objectContaining({ status: "running" })] });
    expect(during.last.info.role === "assistant" && during.last.info.time.completed).toBeFalsy();
    expect(endedAt, "the delegation ended while opencode recorded the parent running").toBe(0);

    // A second conductor (another process) reads the same: running, nothing to answer.
    const late = new Conductor({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory });
    try {
      expect(await late.result(parent)).toMatchObject({ state: "busy", last: { status: "running" } });
      expect(await late.pending({ sessionId: parent })).toEqual([]);
    } finally {
      late.close();
    }
    expect(endedAt).toBe(0);

    const r = await delegation;
    const rec = await recorded(parent);
    expect(rec).toMatchObject({ parentStatus: "idle", childStatus: "idle", task: [expect.objectContaining({ status: "completed" })] });
    expect(rec.last.info).toMatchObject({ role: "assistant", finish: "stop" });
    expect(rec.last.info.role === "assistant" && rec.last.info.error).toBeFalsy();
    expect(r).toMatchObject({ sessionId: parent, status: "done", answer: rec.lastText, messageId: rec.prompt, tools: [{ tool: "task", status: "completed" }] });
  }, 50_000);

  it("a child model that never answers: a delegate timing out says running, as do a later result() and wait(); opencode records the parent busy with its task running; an interrupt ends it as recorded", async () => {
    // No headers at all: opencode waits (chunkTimeout counts only between chunks), the child stays busy.
    h.oc.model.queue(taskCall("hang"), hang({ until: new Promise(() => {}) }));
    const before = chats();
    const r = await h.conductor.delegate({ task: "use a hung sub-agent", timeoutMs: 15_000 });
    const returnedAt = Date.now();
    const child = await childRequest(r.sessionId, before);
    // The wait outlasted the quiet: it re-read the parent during it (before its timeout's own reads), and still said running.
    const quiet = reads.filter((x) => x.at >= child.at + QUIET_FIRST_MS - 500 && x.at < returnedAt - 1_000);
    expect(quiet.filter((x) => x.url.includes(`/session/${r.sessionId}/message`)).length).toBeGreaterThan(0);
    const at = await recorded(r.sessionId);
    expect(child.sessionId).toBe(at.child.id);
    expect(at).toMatchObject({ parentStatus: "busy", childStatus: "busy", task: [expect.objectContaining({ status: "running" })] });
    expect(at.last.info.role === "assistant" && at.last.info.time.completed).toBeFalsy();
    expect(r).toMatchObject({ sessionId: r.sessionId, status: "running" });
    expect(r.error).toBeUndefined();

    const late = new Conductor({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory });
    try {
      expect(await late.result(r.sessionId)).toMatchObject({ state: "busy", last: { status: "running" } });
      expect(await late.wait(r.sessionId, { timeoutMs: 2_000 })).toMatchObject({ status: "running" });
    } finally {
      late.close();
    }
    expect(await h.conductor.result(r.sessionId)).toMatchObject({ state: "busy", last: { status: "running" } });
    expect(await recorded(r.sessionId)).toMatchObject({ parentStatus: "busy", childStatus: "busy" });

    const stopped = await h.conductor.interrupt(r.sessionId);
    const after = await recorded(r.sessionId);
    // opencode's record of the abort: the parent's reply aborted, its task call ended, nothing busy, the model call closed.
    expect(after.last.info).toMatchObject({ role: "assistant", error: { name: "MessageAbortedError" } });
    expect(after.task).toEqual([expect.objectContaining({ status: "error" })]);
    expect(stopped).toMatchObject({ sessionId: r.sessionId, status: "interrupted", wasRunning: true });
    await expect.poll(async () => (await recorded(r.sessionId)).childStatus, { timeout: 10_000 }).toBe("idle");
    expect((await recorded(r.sessionId)).parentStatus).toBe("idle");
    expect(await h.oc.model.waitForEnd(child, { timeoutMs: 10_000 })).toMatchObject({ clientClosed: true });
  }, 50_000);
});
