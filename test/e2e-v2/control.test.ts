// Controlling running turns on a real opencode 2.x server through the v2 route adapter: interrupt,
// a permission asked and answered, a question (a form on 2.x) asked and answered, and steer vs
// queue delivery of a second prompt into a running turn. Facts: docs/opencode-2x-behaviour.md.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hang, text, toolCall } from "../support/scripted-model.js";
import { startV2Fixture, type V2Fixture } from "../support/opencode2.js";
import { isOutcome } from "../support/v2-events.js";
import { COLOUR_QUESTION } from "../support/questions.js";
import { V2Engine } from "../../src/core/engine/v2/v2-engine.js";

let v2: V2Fixture;
beforeAll(async () => {
  // `shell: ask` makes every shell call wait for a permission reply.
  v2 = await startV2Fixture({ gitInit: true, permission: { shell: "ask" } });
});
afterAll(() => v2?.stop());

const prompt = (sessionID: string, body: { text: string; delivery?: "steer" | "queue" }) =>
  v2.client.request("session.prompt", { path: { sessionID }, body }) as Promise<{ data: { id: string; delivery: string } }>;
// The permission reply's field is `reply` on the pre-release and `decision` on 2.0.26: take it from the server's spec.
const replyBody = (reply: "once" | "always" | "reject") => ({
  [v2.client.routes.get("permission.reply").bodyProperties.includes("decision") ? "decision" : "reply"]: reply,
});
const inSession = (sessionID: string, type: string) => (e: { type: string; data: Record<string, unknown> }) =>
  e.type === type && e.data.sessionID === sessionID;

describe("interrupt", () => {
  it("ends a running turn with session.execution.interrupted (reason user); the message keeps the partial text, finish error/aborted", async () => {
    const id = await v2.newSession("interrupt");
    v2.server.model.forSession(id).queue(hang({ text: "partial " }));
    const from = v2.log.events.length;
    await prompt(id, { text: "go" });
    await v2.log.waitFor(inSession(id, "session.text.started"), { after: from });
    expect(await v2.client.request("session.active", {})).toEqual({ data: { [id]: { type: "running" } } });

    expect(await v2.client.request("session.interrupt", { path: { sessionID: id } })).toBeUndefined(); // 204
    const outcome = await v2.log.waitFor(isOutcome(id), { after: from });
    expect(outcome).toMatchObject({ type: "session.execution.interrupted", data: { sessionID: id, reason: "user" } });
    expect(v2.log.sequence(id, from).slice(-2)).toEqual(["session.step.failed", "session.execution.interrupted"]);

    const assistant = (await v2.messages(id))[1]!;
    expect(assistant).toMatchObject({ finish: "error", error: { type: "aborted" }, content: [{ type: "text", text: "partial " }] });
    expect(await v2.client.request("session.active", {})).toEqual({ data: {} });
  });
});

describe("a permission", () => {
  it("is asked with permission.asked (the turn stays running), listed per session and globally, and answered with permission.reply", async () => {
    const id = await v2.newSession("permission");
    v2.server.model.forSession(id).queue(toolCall("shell", { command: "echo allowed > perm.txt" }), text("ran it"));
    const from = v2.log.events.length;
    await prompt(id, { text: "run it" });
    const asked = await v2.log.waitFor(inSession(id, "permission.asked"), { after: from });
    expect(asked.data).toMatchObject({
      id: expect.stringMatching(/^per_/),
      sessionID: id,
      action: "shell",
      resources: ["echo allowed > perm.txt"],
      source: { type: "tool" },
    });
    const requestID = asked.data.id as string;

    // Blocked: still "running", no outcome yet, the file not written.
    expect(await v2.client.request("session.active", {})).toEqual({ data: { [id]: { type: "running" } } });
    expect(v2.log.of(id, from).some(isOutcome(id))).toBe(false);
    expect(existsSync(join(v2.server.directory, "perm.txt"))).toBe(false);
    expect(await v2.client.request("permission.list", { path: { sessionID: id } })).toMatchObject({ data: [{ id: requestID }] });
    expect(await v2.client.request("permission.requests", {})).toMatchObject({ data: [{ id: requestID, sessionID: id }] });

    await v2.client.request("permission.reply", { path: { sessionID: id, requestID }, body: replyBody("once") });
    const outcome = await v2.log.waitFor(isOutcome(id), { after: from });
    expect(outcome.type).toBe("session.execution.succeeded");
    expect(v2.log.of(id, from).find((e) => e.type === "permission.replied")?.data).toEqual({ sessionID: id, requestID, reply: "once" });
    expect(readFileSync(join(v2.server.directory, "perm.txt"), "utf8")).toBe("allowed\n");
    expect(await v2.client.request("permission.list", { path: { sessionID: id } })).toEqual({ data: [] });
  });

  it("rejected: the tool fails (aborted, 'declined') and the whole turn ends interrupted with reason shutdown", async () => {
    const id = await v2.newSession("permission-reject");
    v2.server.model.forSession(id).queue(toolCall("shell", { command: "echo no > rejected.txt" }), text("could not"));
    const from = v2.log.events.length;
    await prompt(id, { text: "run it" });
    const asked = await v2.log.waitFor(inSession(id, "permission.asked"), { after: from });
    await v2.client.request("permission.reply", { path: { sessionID: id, requestID: asked.data.id as string }, body: replyBody("reject") });
    const outcome = await v2.log.waitFor(isOutcome(id), { after: from });
    expect(outcome).toMatchObject({ type: "session.execution.interrupted", data: { sessionID: id, reason: "shutdown" } });
    expect(v2.log.sequence(id, from)).toEqual(expect.arrayContaining(["permission.replied", "session.tool.failed", "session.step.failed"]));
    expect(existsSync(join(v2.server.directory, "rejected.txt"))).toBe(false);
    const messages = await v2.messages(id);
    expect(messages).toHaveLength(2); // the scripted "could not" was never asked for
    expect(messages[1]).toMatchObject({
      finish: "error",
      error: { type: "aborted", message: "Step interrupted" },
      content: [{ type: "tool", name: "shell", state: { status: "error", error: { type: "aborted", message: "The user declined this tool call" } } }],
    });
  });
});

describe("a question", () => {
  it("is a form on 2.x (form.created, metadata.kind question); form.reply with {answer: {q0}} resumes the turn", async () => {
    const id = await v2.newSession("question");
    const question = COLOUR_QUESTION;
    v2.server.model.forSession(id).queue(toolCall("question", { questions: [question] }), text("blue it is"));
    const from = v2.log.events.length;
    await prompt(id, { text: "ask me" });
    const created = await v2.log.waitFor((e) => e.type === "form.created" && (e.data.form as { sessionID?: string }).sessionID === id, { after: from });
    const form = created.data.form as { id: string; metadata: unknown; fields: unknown[] };
    expect(form).toMatchObject({
      id: expect.stringMatching(/^frm_/),
      metadata: { kind: "question", tool: { id: expect.any(String) } },
      fields: [
        {
          key: "q0",
          title: "Colour",
          description: "Which colour?",
          type: "string",
          options: [
            { value: "red", label: "red" },
            { value: "blue", label: "blue" },
          ],
        },
      ],
    });
    // The question routes exist on this release but stay empty: the question tool makes forms.
    expect(await v2.client.request("question.list", { path: { sessionID: id } })).toEqual({ data: [] });
    expect(await v2.client.request("form.list", { path: { sessionID: id } })).toMatchObject({ data: [{ id: form.id }] });
    expect(await v2.client.request("session.active", {})).toEqual({ data: { [id]: { type: "running" } } });

    await v2.client.request("form.reply", { path: { sessionID: id, formID: form.id }, body: { answer: { q0: "blue" } } });
    const outcome = await v2.log.waitFor(isOutcome(id), { after: from });
    expect(outcome.type).toBe("session.execution.succeeded");
    expect(v2.log.events.slice(from).find((e) => e.type === "form.replied")?.data).toEqual({ id: form.id, sessionID: id, answer: { q0: "blue" } });
    const toolStep = (await v2.messages(id))[1]!;
    expect(toolStep.content?.[0]).toMatchObject({ type: "tool", name: "question", state: { status: "completed", metadata: { answers: [["blue"]] } } });
  });

  it("a reply of the wrong shape is refused with HTTP 400 and an InvalidRequestError body", async () => {
    const id = await v2.newSession("question-bad-reply");
    v2.server.model
      .forSession(id)
      .queue(toolCall("question", { questions: [{ question: "Yes?", header: "Y", options: [{ label: "yes", description: "y" }] }] }), text("ok"));
    const from = v2.log.events.length;
    await prompt(id, { text: "ask me" });
    const created = await v2.log.waitFor((e) => e.type === "form.created" && (e.data.form as { sessionID?: string }).sessionID === id, { after: from });
    const formID = (created.data.form as { id: string }).id;
    const error = await v2.client.request("form.reply", { path: { sessionID: id, formID }, body: { answers: [["yes"]] } }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "BadRequestError",
      status: 400,
      serverName: "InvalidRequestError",
      body: { _tag: "InvalidRequestError", kind: "Payload" },
    });
    expect((error as Error).message).toMatch(/Missing key/);
    await v2.client.request("form.reply", { path: { sessionID: id, formID }, body: { answer: { q0: "yes" } } });
    expect((await v2.log.waitFor(isOutcome(id), { after: from })).type).toBe("session.execution.succeeded");
  });
});

describe("a second prompt into a running turn", () => {
  // The first turn: a tool step, then a text step. The second prompt arrives during the tool step.
  async function secondPromptDuring(delivery: "steer" | "queue") {
    const id = await v2.newSession(delivery);
    v2.server.model
      .forSession(id)
      .queue(toolCall("read", { path: join(v2.server.directory, "README.md") }, { delayMs: 0 }), text("answer one"), text("answer two"));
    const from = v2.log.events.length;
    const first = await prompt(id, { text: "first" });
    await v2.log.waitFor(inSession(id, "session.tool.called"), { after: from });
    const second = await prompt(id, { text: "second", delivery });
    const outcome = await v2.log.waitFor(isOutcome(id), { after: from });
    const turnEvents = v2.log.of(id, from).filter((e) => /^session\.(input|execution|step)\./.test(e.type));
    return { id, first: first.data, second: second.data, outcome, turnEvents };
  }
  const promotedBefore = (events: { type: string; data: Record<string, unknown> }[], inputID: string) =>
    events.filter((e) => e.type === "session.step.started").length -
    events.slice(events.findIndex((e) => e.type === "session.input.promoted" && e.data.inputID === inputID)).filter((e) => e.type === "session.step.started")
      .length;

  it("steer: admitted at once, promoted when the current step ends, so the very next model call sees it; one execution", async () => {
    const r = await secondPromptDuring("steer");
    expect(r.second).toMatchObject({ delivery: "steer" });
    expect(r.outcome.type).toBe("session.execution.succeeded");
    expect(r.turnEvents.filter((e) => e.type === "session.execution.started")).toHaveLength(1);
    expect(promotedBefore(r.turnEvents, r.second.id)).toBe(1); // after the tool step, before step 2
    expect(r.turnEvents.filter((e) => e.type === "session.step.started")).toHaveLength(2);
    const messages = await v2.messages(r.id);
    expect(messages.map((m) => [m.type, m.text ?? m.content?.map((c) => c.text ?? c.name).join()])).toEqual([
      ["user", "first"],
      ["assistant", "read"],
      ["user", "second"],
      ["assistant", "answer one"],
    ]);
  });

  it("queue: admitted at once, promoted only when the turn would have ended, then answered by one more step; still one execution", async () => {
    const r = await secondPromptDuring("queue");
    expect(r.second).toMatchObject({ delivery: "queue" });
    expect(r.outcome.type).toBe("session.execution.succeeded");
    expect(r.turnEvents.filter((e) => e.type === "session.execution.started")).toHaveLength(1);
    expect(promotedBefore(r.turnEvents, r.second.id)).toBe(2); // after the tool step and the text step
    expect(r.turnEvents.filter((e) => e.type === "session.step.started")).toHaveLength(3);
    const messages = await v2.messages(r.id);
    expect(messages.map((m) => [m.type, m.text ?? m.content?.map((c) => c.text ?? c.name).join()])).toEqual([
      ["user", "first"],
      ["assistant", "read"],
      ["assistant", "answer one"],
      ["user", "second"],
      ["assistant", "answer two"],
    ]);
  });
});

describe("prompts waiting in a running turn (the pre-release's pending list; 2.0.26's inbox)", () => {
  it("are listed through the engine with their delivery and text, outlive an interrupt, and run with the next prompt", async () => {
    const id = await v2.newSession("pending");
    v2.server.model.forSession(id).queue(hang({ text: "partial " }), text("answer two"), text("answer three"));
    const engine = new V2Engine(v2.client, v2.server.directory);
    const from = v2.log.events.length;
    await prompt(id, { text: "first" });
    await v2.log.waitFor(inSession(id, "session.text.started"), { after: from });
    // The step never ends (the model hangs): a steer waits for the step's end, a queued prompt for the execution's.
    const queued = (await prompt(id, { text: "later", delivery: "queue" })).data;
    const steered = (await prompt(id, { text: "now", delivery: "steer" })).data;
    const listed = await engine.queuedInputs(id);
    expect(listed.map((q) => [q.id, q.delivery, q.text, q.type])).toEqual([
      [queued.id, "queue", "later", "user"],
      [steered.id, "steer", "now", "user"],
    ]);
    // This server can list them but neither cancel nor steer one (2.0.26's inbox can): it says so, naming its version.
    expect(await engine.capabilities()).toMatchObject({ listQueued: true, cancelQueued: false, steerQueued: false, turnDiffLines: false, sessionRules: false });
    await expect(engine.cancelQueued(id, queued.id)).rejects.toThrow(`opencode ${v2.client.identity.version} cannot cancel a queued prompt`);
    await expect(engine.steerQueued(id, queued.id)).rejects.toThrow(/cannot turn a queued prompt into a steer: .*send the message again with delivery steer/);

    // An interrupt ends the execution and leaves both waiting, the session idle.
    await v2.client.request("session.interrupt", { path: { sessionID: id } });
    expect((await v2.log.waitFor(isOutcome(id), { after: from })).type).toBe("session.execution.interrupted");
    expect(await v2.client.request("session.active", {})).toEqual({ data: {} });
    expect((await engine.queuedInputs(id)).map((q) => q.id)).toEqual([queued.id, steered.id]);

    // The next prompt's execution promotes the steer with it, then the queued one after its step.
    const next = v2.log.events.length;
    const third = (await prompt(id, { text: "next" })).data;
    expect((await v2.log.waitFor(isOutcome(id), { after: next })).type).toBe("session.execution.succeeded");
    const promoted = v2.log
      .of(id, next)
      .filter((e) => e.type === "session.input.promoted")
      .map((e) => e.data.inputID);
    expect(promoted).toEqual([steered.id, third.id, queued.id]);
    expect(await engine.queuedInputs(id)).toEqual([]);
    const messages = await v2.messages(id);
    expect(messages.map((m) => [m.type, m.text ?? m.content?.map((c) => c.text).join()])).toEqual([
      ["user", "first"],
      ["assistant", "partial "],
      ["user", "now"],
      ["user", "next"],
      ["assistant", "answer two"],
      ["user", "later"],
      ["assistant", "answer three"],
    ]);
  });
});
