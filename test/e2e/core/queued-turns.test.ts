// A message queued behind another turn, followed from two processes' worth of conductors on one
// opencode 1.x and one state dir. 1.x answers the queued message in the same busy period: the first
// turn's reply completes and the queued message's reply starts without an idle in between, so a
// watch of the first turn gets its verdict while the second turn runs. The answer must describe the
// turn the verdict is about, as opencode recorded it, never pair that verdict with the later turn's
// message (a loaded CI run settled an oc_send task `done` with an empty answer that way). Expected
// values are opencode's record, re-read.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Conductor } from "../../../src/core/conductor.js";
import { runningWatch } from "../../../src/core/turns/kept-watches.js";
import { useConductor } from "../../support/conductor.js";
import { text } from "../../support/scripted-model.js";

const h = useConductor();

/** The session's model calls for its turns (a title request may come late: it is not one). */
const chats = (sessionId: string) => h.oc.model.requestsFor(sessionId).filter((r) => r.kind === "chat").length;

/** A gate a scripted step waits for before it answers. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe("a message queued behind another turn (1.x)", () => {
  let stateDir: string;
  /** Another conductor on the same server and state dir, as another process would be. */
  let other: Conductor;
  beforeAll(() => {
    stateDir = join(h.oc.root, "state");
    other = new Conductor({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory, stateDir });
  });
  afterAll(() => other?.close());

  /**
   * The turn started by user message `id`, as opencode recorded it (re-read, the raw messages): `done`
   * when its last reply completed on `stop` with no error, and that reply's text.
   */
  async function recordedTurn(sessionId: string, id: string) {
    const messages = await h.conductor.engine.messages(sessionId);
    expect(
      messages.some((m) => m.info.id === id && m.info.role === "user"),
      `no user message ${id} in session ${sessionId}`,
    ).toBe(true);
    const last = messages.filter((m) => m.info.role === "assistant" && m.info.parentID === id).at(-1);
    const info = last?.info.role === "assistant" ? last.info : undefined;
    const done = info !== undefined && info.time.completed !== undefined && info.finish === "stop" && !info.error;
    const answer = (last?.parts ?? [])
      .flatMap((p) => (p.type === "text" ? [p.text] : []))
      .join("")
      .trim();
    return { status: done ? "done" : "not ended", answer, messageId: id };
  }

  it("a wait on the running turn answers that turn's outcome, not the queued message's, though the session has moved on to it", async () => {
    const first = await h.conductor.delegate({ task: "Open the ticket", model: "fake/scripted" });
    expect(first.status).toBe("done");
    const sessionId = first.sessionId;
    const one = gate();
    const two = gate();
    h.oc.model.queue(text("The first job is done.", { until: one.opened }), text("The queued job is done.", { until: two.opened }));
    const before = chats(sessionId);
    // This conductor sends the first job and keeps following its turn.
    await h.conductor.send(sessionId, "Do the first job", { wait: false });
    await h.oc.model.waitForRequests(before + 1, { sessionId, kind: "chat", timeoutMs: 60_000 });
    // Another process queues a message behind it.
    await other.send(sessionId, "Then do the queued job", { wait: false });
    // A wait that joins the first turn's watch (this process follows it): its progress goes to this listener once it has.
    const joined = () => undefined;
    const waiting = h.conductor.wait(sessionId, { timeoutMs: 120_000, onProgress: joined });
    await vi.waitUntil(() => runningWatch(h.conductor, sessionId)?.onProgress === joined, { timeout: 60_000, interval: 20 });
    one.open();
    // The queued message's reply is at the model, and stays open: the first turn's verdict comes now.
    await h.oc.model.waitForRequests(before + 2, { sessionId, kind: "chat", timeoutMs: 60_000 });
    const answer = await waiting;
    expect(answer.messageId).toBeDefined();
    const truth = await recordedTurn(sessionId, answer.messageId!);
    expect([answer.status, answer.answer, answer.messageId]).toEqual([truth.status, truth.answer, truth.messageId]);
    expect(truth).toMatchObject({ status: "done", answer: "The first job is done." });
    two.open();
    const last = await other.wait(sessionId, { timeoutMs: 120_000 });
    const lastTruth = await recordedTurn(sessionId, last.messageId!);
    expect([last.status, last.answer]).toEqual([lastTruth.status, lastTruth.answer]);
    expect(lastTruth).toMatchObject({ status: "done", answer: "The queued job is done." });
  });

  it("a delegation of a queued send, read from another conductor that follows the turn before it, settles with the message's own turn", async () => {
    const reader = new Conductor({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory, stateDir });
    try {
      const first = await h.conductor.delegate({ task: "Open the log", model: "fake/scripted" });
      const sessionId = first.sessionId;
      const one = gate();
      const two = gate();
      h.oc.model.queue(text("Logged the first entry.", { until: one.opened }), text("Logged the queued entry.", { until: two.opened }));
      const before = chats(sessionId);
      // The reader sends the first job itself, so it keeps a watch of that turn.
      await reader.send(sessionId, "Write the first entry", { wait: false });
      await h.oc.model.waitForRequests(before + 1, { sessionId, kind: "chat", timeoutMs: 60_000 });
      const handle = await other.delegations.send(sessionId, "Then write the queued entry");
      // Read while the first turn runs: the reader follows the delegation from here.
      expect((await reader.delegations.get(handle.id)).status).toBe("working");
      one.open();
      await h.oc.model.waitForRequests(before + 2, { sessionId, kind: "chat", timeoutMs: 60_000 });
      // The message's reply is still open at the model: its turn has not ended, whoever reads it.
      expect((await reader.delegations.wait(handle.id, { timeoutMs: 5_000 })).status).toBe("working");
      two.open();
      const settled = await reader.delegations.wait(handle.id, { timeoutMs: 120_000 });
      expect(settled.status).toBe("completed");
      const result = settled.result as { sessionId: string; status: string; answer: string; messageId: string };
      const truth = await recordedTurn(sessionId, result.messageId);
      expect([result.status, result.answer]).toEqual([truth.status, truth.answer]);
      expect(truth).toMatchObject({ status: "done", answer: "Logged the queued entry." });
    } finally {
      reader.close();
    }
  });
});
