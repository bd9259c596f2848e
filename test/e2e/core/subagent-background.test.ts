// A sub-agent started in the background on opencode 1.x: with OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS
// set, the `task` tool takes `background: true`, starts the child session and returns at once (its
// result says the child is `running`), so the parent's turn goes on and ends while the child works.
// When the child ends, opencode prompts the parent itself: a user message whose one text part is
// synthetic (`<task id="<child>" state="completed">…`), which the parent's agent answers in a turn of
// its own. Compared with opencode's record, re-read from the server: the delegation is the delegated
// prompt's turn (done, its last words, its replies' tokens), and the session's later state is the
// notice's turn (running, then done with the parent's reply to it). A child that ends while the
// parent's turn runs: its notice is queued like any prompt sent then, answered in the same busy
// period, and the delegated turn still ends with its own last reply. Facts: docs/opencode-behaviour.md §5.
import { describe, expect, it } from "vitest";
import { Conductor } from "../../../src/core/conductor.js";
import { useConductor } from "../../support/conductor.js";
import { delay, text, toolCall } from "../../support/scripted-model.js";
import { readMessages, watchSession, type SessionMessages } from "../../support/turns.js";

// The sub-agent on a model of its own, so the parent's and the child's steps, which run at the same
// time here, each take their own script (`model.for`).
const h = useConductor({ env: { OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS: "true" }, config: { agent: { general: { model: "fake/backup" } } } });

type Message = SessionMessages[number];
const textOf = (m: Message) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
/** The assistant messages answering the user message `id` (1.x records the prompt as each reply's parent). */
const repliesTo = (messages: SessionMessages, id: string) => messages.filter((m) => m.info.role === "assistant" && m.info.parentID === id);
const tokensOf = (replies: SessionMessages) => {
  const sum = (f: (t: { input: number; output: number }) => number) => replies.reduce((n, m) => n + (m.info.role === "assistant" ? f(m.info.tokens) : 0), 0);
  return { input: sum((t) => t.input), output: sum((t) => t.output) };
};
const childOf = async (sessionID: string) => {
  const children = await h.conductor.client.call("session.children", { path: { sessionID } });
  expect(children).toHaveLength(1);
  return children[0]!.id;
};
const busy = async () => Object.keys(await h.conductor.client.call("session.status"));
const backgroundTask = (description: string) =>
  toolCall("task", { description, prompt: `${description}, then say so`, subagent_type: "general", background: true });

describe("a background sub-agent on opencode 1.x (experimental flag)", () => {
  it("the delegation ends with the parent's turn, the child still running; opencode's notice of the child's end is a turn of its own, which result() reports", async () => {
    h.oc.model.for("scripted").queue(
      backgroundTask("background work"),
      text("parent: started it"),
      // The reply to opencode's notice, slow enough to read the session while it runs.
      delay(4_000, text("parent: the child is done")),
    );
    h.oc.model.for("backup").queue(delay(4_000, text("child: done")));
    const r = await h.conductor.delegate({ task: "start a sub-agent in the background", timeoutMs: 60_000 });
    const watch = await watchSession(h.conductor.client, r.sessionId);
    try {
      // opencode's record when the delegation answered: the parent's turn over, the child running.
      const child = await childOf(r.sessionId);
      expect(await busy()).toEqual([child]);
      const first = await readMessages(h.conductor.client, r.sessionId);
      const prompt = first.findLast((m) => m.info.role === "user")!;
      expect(first.at(-1)!.info).toMatchObject({ role: "assistant", finish: "stop", parentID: prompt.info.id });
      expect(first.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool" ? [p] : [])))).toEqual([
        expect.objectContaining({
          tool: "task",
          state: expect.objectContaining({ status: "completed", metadata: expect.objectContaining({ sessionId: child, background: true }) }),
        }),
      ]);
      expect(r).toMatchObject({ status: "done", answer: textOf(first.at(-1)!), messageId: prompt.info.id, tools: [{ tool: "task", status: "completed" }] });
      expect(r.tokens).toMatchObject(tokensOf(repliesTo(first, prompt.info.id)));

      // The child ends; opencode prompts the parent with its notice, and the parent runs again to answer it.
      const noticeReply = await watch.waitFor(
        "the notice's reply",
        (e) => e.type === "message.updated" && e.properties.info.role === "assistant" && e.properties.info.parentID !== prompt.info.id,
      );
      const noticeId = (noticeReply as { properties: { info: { parentID: string } } }).properties.info.parentID;
      const notice = (await readMessages(h.conductor.client, r.sessionId)).find((m) => m.info.id === noticeId)!;
      expect(notice.info.role).toBe("user");
      expect(notice.parts).toEqual([
        expect.objectContaining({ type: "text", synthetic: true, text: expect.stringContaining(`<task id="${child}" state="completed">`) }),
      ]);
      expect(await busy()).toContain(r.sessionId);
      const late = await Conductor.connect({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory });
      try {
        // Running is the notice's turn, not the delegated prompt's again.
        expect(await late.result(r.sessionId)).toMatchObject({ state: "busy", last: { status: "running", messageId: notice.info.id } });

        await watch.idle();
        const all = await readMessages(h.conductor.client, r.sessionId);
        expect(all.at(-1)!.info).toMatchObject({ role: "assistant", finish: "stop", parentID: notice.info.id });
        const expected = { status: "done", answer: textOf(all.at(-1)!), messageId: notice.info.id };
        const state = await late.result(r.sessionId);
        expect(state).toMatchObject({ state: "idle", last: expected });
        expect(state.last.tokens).toMatchObject(tokensOf(repliesTo(all, notice.info.id)));
        // The model was sent the notice as the input to answer.
        const sent = (
          h.oc.model
            .requestsFor(r.sessionId)
            .filter((q) => q.kind === "chat")
            .at(-1)!.body.messages ?? []
        ).at(-1);
        expect(sent).toMatchObject({ role: "user" });
        expect(JSON.stringify(sent?.content)).toContain(`<task id=\\"${child}\\" state=\\"completed\\">`);
        expect(await h.conductor.wait(r.sessionId, { timeoutMs: 20_000 })).toMatchObject(expected);
      } finally {
        late.close();
      }
    } finally {
      watch.close();
    }
  });

  it("a child that ends while the parent's turn runs: its notice is queued behind that turn and answered in the same busy period; the delegation is the delegated prompt's turn", async () => {
    h.oc.model.for("scripted").queue(
      backgroundTask("quick work"),
      // The parent's next step outlasts the child, so the notice arrives while the turn runs.
      delay(3_000, text("parent: started it")),
      delay(2_000, text("parent: the child is done")),
    );
    h.oc.model.for("backup").queue(text("child: done"));
    const session = await h.conductor.client.call("session.create", { body: {} });
    const watch = await watchSession(h.conductor.client, session.id);
    try {
      const r = await h.conductor.delegate({ sessionId: session.id, task: "start a quick sub-agent in the background", timeoutMs: 60_000 });
      const child = await childOf(r.sessionId);
      // opencode's record when the delegation answered: the delegated prompt's last reply complete,
      // the notice already written after it, and its reply started in the same busy period.
      const first = await readMessages(h.conductor.client, r.sessionId);
      const [prompt, notice] = first.filter((m) => m.info.role === "user");
      expect(notice!.parts).toEqual([
        expect.objectContaining({ type: "text", synthetic: true, text: expect.stringContaining(`<task id="${child}" state="completed">`) }),
      ]);
      const answered = repliesTo(first, prompt!.info.id);
      expect(answered.at(-1)!.info).toMatchObject({ finish: "stop" });
      expect(r).toMatchObject({ status: "done", answer: textOf(answered.at(-1)!), messageId: prompt!.info.id });
      expect(r.tokens).toMatchObject(tokensOf(answered));

      // One busy period: no idle between the delegated prompt's turn and the notice's.
      await watch.idle();
      expect(watch.events.filter((e) => e.type === "session.idle")).toHaveLength(1);
      const all = await readMessages(h.conductor.client, r.sessionId);
      expect(all.map((m) => [m.info.role, m.info.role === "assistant" ? m.info.finish : m.info.id])).toEqual([
        ["user", prompt!.info.id],
        ["assistant", "tool-calls"],
        ["assistant", "stop"],
        ["user", notice!.info.id],
        ["assistant", "stop"],
      ]);
      const late = await Conductor.connect({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory });
      try {
        const state = await late.result(r.sessionId);
        expect(state).toMatchObject({ state: "idle", last: { status: "done", answer: textOf(all.at(-1)!), messageId: notice!.info.id } });
        expect(state.last.tokens).toMatchObject(tokensOf(repliesTo(all, notice!.info.id)));
      } finally {
        late.close();
      }
    } finally {
      watch.close();
    }
  });
});
