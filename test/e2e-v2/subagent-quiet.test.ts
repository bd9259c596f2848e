// A sub-agent that runs long or hangs, on the opencode 2.x pre-release: while the child's model call
// is pending, opencode sends nothing about the parent or the child (only the stream's heartbeats),
// so a wait on the parent's turn goes quiet and re-reads the server (turns/quiet-rereads.ts). The
// re-read finds the parent in `session.active`, its last step unfinished and its `subagent` call
// running, and no outcome event came: the delegation stays `running` through it, for the waiting
// delegate and for a second conductor's result() and pending(); it ends `done` once opencode
// records `session.execution.succeeded` for the parent. A sub-agent whose model never answers
// leaves the parent running with its `subagent` call running: a delegate or wait that times out says
// `running` (never done or lost), as does a later result(), and an interrupt ends it as opencode
// records it. Every claim is compared with opencode's record re-read from the server. Facts:
// docs/opencode-2x-behaviour.md ("A blocked turn", sub-agents).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import { QUIET_FIRST_MS, QUIET_MAX_MS } from "../../src/core/turns/quiet-rereads.js";
import { startV2Fixture, type V2Fixture } from "../support/opencode2.js";
import { delay, hang, text, toolCall } from "../support/scripted-model.js";

let v2: V2Fixture;
let conductor: Conductor;
/** The conductor reads the server with the global fetch at call time: this log shows when it read a session. */
const reads: Array<{ at: number; url: string }> = [];
const realFetch = globalThis.fetch;
beforeAll(async () => {
  v2 = await startV2Fixture();
  conductor = await Conductor.connect({ url: v2.server.url, password: v2.server.password, directory: v2.server.directory });
  globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    const method = input instanceof Request ? input.method : (init?.method ?? "GET");
    if (method === "GET") reads.push({ at: Date.now(), url });
    return realFetch(input, init);
  };
});
// A test that failed must not leave its script to the next one.
beforeEach(() => v2.server.model.clear());
afterAll(async () => {
  globalThis.fetch = realFetch;
  conductor?.close();
  await v2?.stop();
});

const subagentCall = (description: string) => toolCall("subagent", { agent: "general", description, prompt: `${description}, then say so` });
const messagesRead = (sessionID: string) => (r: { url: string }) => r.url.includes(`/api/session/${sessionID}/message`);

type V2Session = { id: string; parentID?: string };

/** opencode's record now: the parent's and the child's activity, the parent's messages and its subagent call. */
async function recorded(sessionID: string) {
  const messages = await v2.messages(sessionID);
  const children = ((await v2.client.request("session.list", { query: { parentID: sessionID } })) as { data: V2Session[] }).data;
  expect(children).toHaveLength(1);
  const child = children[0]!;
  const active = ((await v2.client.request("session.active", {})) as { data: Record<string, { type: string }> }).data;
  const last = messages.at(-1)!;
  const lastText = (last.content ?? []).flatMap((c) => (c.type === "text" ? [c.text ?? ""] : [])).join("");
  const call = messages.flatMap((m) => (m.content ?? []).filter((c) => c.type === "tool" && c.name === "subagent")).map((c) => c.state);
  const prompt = messages.findLast((m) => m.type === "user")!.id;
  return { messages, last, lastText, call, prompt, child, parent: active[sessionID]?.type ?? "idle", childActivity: active[child.id]?.type ?? "idle" };
}

const outcomes = (sessionID: string, from: number) =>
  v2.log.of(sessionID, from).flatMap((e) => (e.type.startsWith("session.execution.") && e.type !== "session.execution.started" ? [e.type] : []));

/** The child's model request, once it arrived (the first one of a session other than the parent's). */
async function childRequest(before: number) {
  const requests = await v2.server.model.waitForRequests(before + 2, { kind: "chat", timeoutMs: 30_000 });
  const parent = requests[before]!.sessionId;
  const request = requests.slice(before).find((r) => r.sessionId !== parent)!;
  expect(request).toBeDefined();
  return { parent: parent!, request };
}

const chats = () => v2.server.model.requests.filter((r) => r.kind === "chat").length;
// 2.x's heartbeat comes every 15 s, more than the first quiet: the first look may find no data since
// the quiet began (not live) and looks again after the first delay (quiet-rereads.ts), so the parent
// is re-read within 2 × QUIET_FIRST_MS of the quiet's start. Before, that look doubled the delay and
// the first read came after 30 s, past this child's call.
const CHILD_MS = QUIET_FIRST_MS * 2 + 3_000;

describe("a sub-agent that runs long or hangs, on opencode 2.x", () => {
  it("a child model call longer than the quiet: the quiet re-read finds the parent running, the delegation stays running, then ends done as recorded", async () => {
    expect(QUIET_MAX_MS).toBeGreaterThanOrEqual(QUIET_FIRST_MS * 2);
    v2.server.model.queue(subagentCall("take long"), delay(CHILD_MS, text("child took long")), text("parent done after the long child"));
    const before = chats();
    const from = v2.log.events.length;
    let endedAt = 0;
    const delegation = conductor.delegate({ task: "use a slow sub-agent", timeoutMs: 90_000 }).finally(() => (endedAt = Date.now()));
    const { parent, request: child } = await childRequest(before);

    // The watch re-reads the parent after the quiet (heartbeats only); wait for that read.
    const quietRead = () => reads.find((r) => r.at >= child.at + QUIET_FIRST_MS - 500 && messagesRead(parent)(r));
    await expect.poll(quietRead, { timeout: CHILD_MS - 1_000, interval: 100 }).toBeTruthy();
    const during = await recorded(parent);
    // opencode's record meanwhile: both running, the parent's subagent call running, no outcome event.
    expect(during).toMatchObject({ parent: "running", childActivity: "running", call: [expect.objectContaining({ status: "running" })] });
    expect(outcomes(parent, from)).toEqual([]);
    expect(endedAt, "the delegation ended while opencode recorded the parent running").toBe(0);

    // A second conductor (another process) reads the same: running, nothing to answer.
    const late = await Conductor.connect({ url: v2.server.url, password: v2.server.password, directory: v2.server.directory });
    try {
      expect(await late.result(parent)).toMatchObject({ state: "busy", last: { status: "running" } });
      expect(await late.pending({ sessionId: parent })).toEqual([]);
    } finally {
      late.close();
    }
    expect(endedAt).toBe(0);

    const r = await delegation;
    const rec = await recorded(parent);
    expect(rec).toMatchObject({ parent: "idle", childActivity: "idle", call: [expect.objectContaining({ status: "completed" })] });
    expect(outcomes(parent, from)).toEqual(["session.execution.succeeded"]);
    expect(rec.last).toMatchObject({ type: "assistant", finish: "stop" });
    expect(rec.last.error).toBeUndefined();
    expect(r).toMatchObject({
      sessionId: parent,
      status: "done",
      answer: rec.lastText,
      messageId: rec.prompt,
      tools: [{ tool: "subagent", status: "completed" }],
    });
  }, 60_000);

  it("a child model that never answers: a delegate timing out says running, as do a later result() and wait(); opencode records the parent running with its subagent call running; an interrupt ends it as recorded", async () => {
    // No headers at all: the child's step waits on the model.
    v2.server.model.queue(subagentCall("hang"), hang({ until: new Promise(() => {}) }));
    const before = chats();
    const from = v2.log.events.length;
    const r = await conductor.delegate({ task: "use a hung sub-agent", timeoutMs: 2 * QUIET_FIRST_MS + 5_000 });
    const returnedAt = Date.now();
    const { parent, request: child } = await childRequest(before);
    expect(parent).toBe(r.sessionId);
    // The wait outlasted the quiet: it re-read the parent during it (before its timeout's own reads), and still said running.
    const quiet = reads.filter((x) => x.at >= child.at + QUIET_FIRST_MS - 500 && x.at < returnedAt - 1_000);
    expect(quiet.filter(messagesRead(parent)).length).toBeGreaterThan(0);
    expect(r).toMatchObject({ sessionId: r.sessionId, status: "running" });
    expect(r.error).toBeUndefined();
    const at = await recorded(r.sessionId);
    expect(child.sessionId).toBe(at.child.id);
    expect(at).toMatchObject({ parent: "running", childActivity: "running", call: [expect.objectContaining({ status: "running" })] });
    expect(outcomes(r.sessionId, from)).toEqual([]);

    const late = await Conductor.connect({ url: v2.server.url, password: v2.server.password, directory: v2.server.directory });
    try {
      expect(await late.result(r.sessionId)).toMatchObject({ state: "busy", last: { status: "running" } });
      expect(await late.wait(r.sessionId, { timeoutMs: 2_000 })).toMatchObject({ status: "running" });
    } finally {
      late.close();
    }
    expect(await conductor.result(r.sessionId)).toMatchObject({ state: "busy", last: { status: "running" } });
    expect(await recorded(r.sessionId)).toMatchObject({ parent: "running", childActivity: "running" });

    const stopped = await conductor.interrupt(r.sessionId);
    await v2.log.waitFor((e) => e.type === "session.execution.interrupted" && e.data.sessionID === r.sessionId, { after: from });
    const after = await recorded(r.sessionId);
    expect(outcomes(r.sessionId, from)).toEqual(["session.execution.interrupted"]);
    expect(stopped).toMatchObject({ sessionId: r.sessionId, status: "interrupted", wasRunning: true });
    await expect.poll(async () => (await recorded(r.sessionId)).childActivity, { timeout: 10_000 }).toBe("idle");
    expect(after.parent).toBe("idle");
    expect(await v2.server.model.waitForEnd(child, { timeoutMs: 10_000 })).toMatchObject({ clientClosed: true });
  }, 60_000);
});
