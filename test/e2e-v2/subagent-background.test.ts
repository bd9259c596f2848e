// A sub-agent started in the background on the opencode 2.x pre-release: the `subagent` tool with
// `background: true` starts the child session and returns at once (its result says the child is
// `running`), so the parent's execution goes on and ends while the child still works. When the
// child ends, opencode writes a notice into the parent session itself, a `synthetic` input
// (`metadata.source: "subagent"`), which starts an execution of its own in which the parent's agent
// answers it. Compared with opencode's record, re-read from the server: the delegation is the first
// execution (done, with that execution's answer and tokens, the child still running), and the
// session's later state is the notice's turn (running, then done with the parent's reply to it),
// never the delegated prompt's turn running again or ending with the notice's answer (as it was
// read before: the notice was skipped and its reply counted as the prompt's). Facts:
// docs/opencode-2x-behaviour.md ("Sub-agents in the background").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { V2Event } from "../../src/client/v2/index.js";
import { Conductor } from "../../src/core/conductor.js";
import { startV2Fixture, type V2Fixture, type V2Message } from "../support/opencode2.js";
import { delay, text, toolCall } from "../support/scripted-model.js";

let v2: V2Fixture;
let conductor: Conductor;
beforeAll(async () => {
  // The sub-agent on a model of its own, so the parent's and the child's steps, which run at the
  // same time here, each take their own script (`model.for`).
  v2 = await startV2Fixture({ config: { agent: { general: { model: "fake/backup" } } } });
  conductor = await Conductor.connect({ url: v2.server.url, password: v2.server.password, directory: v2.server.directory });
});
afterAll(async () => {
  conductor?.close();
  await v2?.stop();
});

type V2Tokens = { input: number; output: number; reasoning: number; cache: { read: number; write: number } };

const textOf = (m: V2Message) => (m.content ?? []).flatMap((c) => (c.type === "text" ? [c.text ?? ""] : [])).join("");
const tokensOf = (replies: V2Message[]) => {
  const sum = (f: (t: V2Tokens) => number) => replies.reduce((n, m) => n + f(m.tokens as V2Tokens), 0);
  return { input: sum((t) => t.input), output: sum((t) => t.output) };
};
const active = async () => ((await v2.client.request("session.active", {})) as { data: Record<string, unknown> }).data;
const childOf = async (sessionID: string) => {
  const children = ((await v2.client.request("session.list", { query: { parentID: sessionID } })) as { data: Array<{ id: string }> }).data;
  expect(children).toHaveLength(1);
  return children[0]!.id;
};
const outcomeOf = (sessionID: string) => (e: V2Event) =>
  e.type.startsWith("session.execution.") && e.type !== "session.execution.started" && e.data.sessionID === sessionID;

describe("a background sub-agent on opencode 2.x", () => {
  it("the delegation ends with the parent's execution, the child still running; opencode's notice of the child's end is a turn of its own, which result() reports", async () => {
    const scripted = v2.server.model.for("scripted");
    scripted.queue(
      toolCall("subagent", { agent: "general", description: "background work", prompt: "work in the background", background: true }),
      text("parent: started it"),
      // The reply to opencode's notice, slow enough to read the session while it runs.
      delay(3_000, text("parent: the child is done")),
    );
    v2.server.model.for("backup").queue(delay(4_000, text("child: done")));
    const from = v2.log.events.length;
    const r = await conductor.delegate({ task: "start a sub-agent in the background", timeoutMs: 60_000 });

    // opencode's record when the delegation answered: the parent's execution over, the child running.
    const child = await childOf(r.sessionId);
    expect(Object.keys(await active())).toEqual([child]);
    const first = await v2.messages(r.sessionId);
    const prompt = first.findLast((m) => m.type === "user")!;
    const firstReplies = first.filter((m) => m.type === "assistant");
    expect(first.at(-1)).toMatchObject({ type: "assistant", finish: "stop" });
    expect(firstReplies[0]!.content).toEqual([
      expect.objectContaining({
        type: "tool",
        name: "subagent",
        state: expect.objectContaining({ status: "completed", metadata: expect.objectContaining({ sessionID: child, status: "running" }) }),
      }),
    ]);
    expect(
      v2.log
        .of(r.sessionId, from)
        .filter(outcomeOf(r.sessionId))
        .map((e) => e.type),
    ).toEqual(["session.execution.succeeded"]);
    expect(r).toMatchObject({ status: "done", answer: textOf(first.at(-1)!), messageId: prompt.id, tools: [{ tool: "subagent", status: "completed" }] });
    expect(r.tokens).toMatchObject(tokensOf(firstReplies));

    // The child ends; opencode promotes its notice into the parent, which runs again to answer it.
    const promoted = await v2.log.waitFor((e) => e.type === "session.input.promoted" && e.data.sessionID === r.sessionId && e.data.inputID !== prompt.id, {
      after: from,
      what: "the notice promoted",
    });
    const notice = (await v2.messages(r.sessionId)).find((m) => m.id === promoted.data.inputID)!;
    expect(notice).toMatchObject({ type: "synthetic", metadata: { source: "subagent", childID: child, state: "completed" } });
    expect(Object.keys(await active())).toContain(r.sessionId);
    const late = await Conductor.connect({ url: v2.server.url, password: v2.server.password, directory: v2.server.directory });
    try {
      // Running is the notice's turn, not the delegated prompt's again.
      const running = await late.result(r.sessionId);
      expect(running).toMatchObject({ state: "busy", last: { status: "running", messageId: notice.id } });

      const ended = await v2.log.waitFor(outcomeOf(r.sessionId), { after: v2.log.events.indexOf(promoted), what: "the notice's execution ending" });
      expect(ended.type).toBe("session.execution.succeeded");
      const all = await v2.messages(r.sessionId);
      const noticeReplies = all.slice(all.findIndex((m) => m.id === notice.id) + 1).filter((m) => m.type === "assistant");
      expect(all.at(-1)).toMatchObject({ type: "assistant", finish: "stop" });
      const state = await late.result(r.sessionId);
      expect(state).toMatchObject({ state: "idle", last: { status: "done", answer: textOf(all.at(-1)!), messageId: notice.id } });
      expect(state.last.tokens).toMatchObject(tokensOf(noticeReplies));
      // The model was sent the notice as the input to answer.
      const sent = (v2.server.model.requestsFor(r.sessionId).at(-1)!.body.messages ?? []).at(-1);
      expect(sent).toMatchObject({ role: "user" });
      expect(JSON.stringify(sent?.content)).toContain(`<subagent id=\\"${child}\\" state=\\"completed\\"`);
      expect(await conductor.wait(r.sessionId, { timeoutMs: 20_000 })).toMatchObject({ status: "done", answer: textOf(all.at(-1)!), messageId: notice.id });
    } finally {
      late.close();
    }
  });

  it("a child that ends while the parent's execution runs: its notice joins that execution, and the delegation reports the notice's turn, the execution's last", async () => {
    v2.server.model.for("scripted").queue(
      toolCall("subagent", { agent: "general", description: "quick work", prompt: "work quickly", background: true }),
      // The parent's next step outlasts the child, so the notice arrives while the execution runs.
      delay(3_000, text("parent: started it")),
      text("parent: the child is done"),
    );
    v2.server.model.for("backup").queue(text("child: done"));
    const from = v2.log.events.length;
    const r = await conductor.delegate({ task: "start a quick sub-agent in the background", timeoutMs: 60_000 });

    // opencode's record: one execution, into which the notice was admitted before the step under
    // way ended, then promoted and answered by one more step.
    const child = await childOf(r.sessionId);
    const events = v2.log.of(r.sessionId, from);
    expect(events.filter(outcomeOf(r.sessionId)).map((e) => e.type)).toEqual(["session.execution.succeeded"]);
    const all = await v2.messages(r.sessionId);
    const notice = all.find((m) => m.type === "synthetic")!;
    expect(notice).toMatchObject({ metadata: { source: "subagent", childID: child, state: "completed" } });
    const admitted = events.findIndex((e) => e.type === "session.input.admitted" && e.data.inputID === notice.id);
    const secondStepEnded = events.findIndex(
      (e, i) => e.type === "session.step.ended" && events.slice(0, i).filter((x) => x.type === "session.step.ended").length === 1,
    );
    expect(admitted).toBeGreaterThan(-1);
    expect(admitted).toBeLessThan(secondStepEnded);
    expect(all.map((m) => [m.type, m.finish])).toEqual([
      ["user", undefined],
      ["assistant", "tool-calls"],
      ["assistant", "stop"],
      ["synthetic", undefined],
      ["assistant", "stop"],
    ]);
    expect(await active()).toEqual({});

    // The step after the notice answers it (opencode sends it to the model as the last input), as a
    // step after a steered prompt answers that prompt: the execution's last turn is the notice's.
    const noticeReplies = all.slice(all.indexOf(notice) + 1);
    const expected = { status: "done", answer: textOf(all.at(-1)!), messageId: notice.id };
    expect(r).toMatchObject(expected);
    expect(r.tokens).toMatchObject(tokensOf(noticeReplies));
    const late = await Conductor.connect({ url: v2.server.url, password: v2.server.password, directory: v2.server.directory });
    try {
      expect(await late.result(r.sessionId)).toMatchObject({ state: "idle", last: expected });
    } finally {
      late.close();
    }
  });
});
