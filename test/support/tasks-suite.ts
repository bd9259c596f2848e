// The MCP Tasks suite both majors run (test/e2e/mcp/tasks.test.ts on 1.x, test/e2e-v2/mcp-tasks.test.ts
// on 2.x): delegations and follow-ups as tasks of the io.modelcontextprotocol/tasks extension
// (2026-07-28), driven by a real third-party requester, @modelcontextprotocol/ext-tasks 0.2.2 over
// @modelcontextprotocol/client 2.x, against the built server over Streamable HTTP, real opencode and
// the scripted model. Every outcome is compared with the turn as opencode recorded it (re-read): the
// handle comes at once, polls show the task working, an approval is answered through tasks/update,
// a cancelled task is interrupted in opencode, a task outlives a SIGKILLed server (a new one on the
// same state dir settles it), and the same request id twice starts one agent (or sends one
// message). oc_send with a task: the message's turn followed to its end, as oc_wait would; a cancel of
// one queued behind another turn leaves that turn running and says why.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { ToolExecution } from "@modelcontextprotocol/ext-tasks/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import { summarizeTurn } from "../../src/core/turns/summary.js";
import { auditLines } from "./form-answers.js";
import { startHttpCli, type HttpCli } from "./http-cli.js";
import type { TestOpencode } from "./opencode.js";
import { hang, text, type toolCall } from "./scripted-model.js";
import { freePort, settleAfterRestart, taskClient as openTaskClient, taskDispatch, untilStatus, type FormAnswer } from "./task-dispatch.js";

export interface TasksSuite {
  /** The major's opencode, whose config asks before every shell command. */
  start(): Promise<TestOpencode>;
  /** The agent's shell call in this major's words. */
  shell(command: string): ReturnType<typeof toolCall>;
  /** How this major names a permission request (the input request's key is opencode's id). */
  requestKey: RegExp;
}

type Structured = { session_id: string; status: string; answer: string; delivery?: string; replayed?: boolean };
type Outcome = { status: string; result?: unknown };
const structured = (outcome: Outcome) => (outcome.result as { structuredContent: Structured } | undefined)?.structuredContent;
const textOf = (outcome: Outcome) => ((outcome.result as { content: Array<{ text: string }> } | undefined)?.content ?? [])[0]?.text ?? "";

export function tasksSuite(major: TasksSuite): void {
  let opencode: TestOpencode;
  let server: HttpCli;
  let reader: Conductor;
  let port: number;
  let stateDir: string;
  const open: Array<{ close(): Promise<void> }> = [];

  const env = () => ({
    OPENCODE_URL: opencode.url,
    OPENCODE_PASSWORD: opencode.password,
    OPENCODE_CONDUCTOR_DIRECTORY: opencode.directory,
    OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
  });

  /** A task client of the server now running; closed after the file. */
  async function taskClient(answer?: (params: unknown) => FormAnswer) {
    const c = await openTaskClient(server.url, answer);
    open.push(c);
    return c;
  }

  /** The session's last turn as opencode recorded it (re-read), and how many prompts it holds. */
  async function recorded(sessionId: string) {
    const messages = await reader.engine.messages(sessionId);
    const turn = summarizeTurn({ sessionId, messages, outcome: "idle", pending: [] });
    return { ...turn, users: messages.filter((m) => m.info.role === "user").length };
  }

  /** The task completed with the turn as opencode recorded it (re-read): the same session, status and answer. */
  async function expectRecordedTurn(outcome: Outcome) {
    expect(outcome.status, JSON.stringify(outcome).slice(0, 800)).toBe("completed");
    const data = structured(outcome)!;
    const truth = await recorded(data.session_id);
    // On a mismatch, say what the task's answer gave as its reason (a `lost` names why it gave up).
    expect([data.session_id, data.status, data.answer], JSON.stringify(data).slice(0, 800)).toEqual([truth.sessionId, truth.status, truth.answer]);
    return { data, truth };
  }

  /**
   * Until the turn is at the model: "mid-task" means opencode has the prompt. A kill while the
   * handle's prompt is still on its way is another case (on a loaded machine the handle comes
   * well before opencode has the prompt), and the scripted replies queued here would go unused.
   */
  async function atTheModel(before: number) {
    await opencode.model.waitForRequests(before + 1, { kind: "chat", timeoutMs: 120_000 });
  }

  /** Cancels the task once its turn is at the model, and waits until opencode has stopped that turn; the task's last view. */
  async function cancelAtTheModel(session: Awaited<ReturnType<typeof taskClient>>["session"], execution: ToolExecution<unknown>, before: number) {
    if (execution.kind !== "task") throw new Error("expected a task");
    const [chat] = await opencode.model.waitForRequests(before + 1, { kind: "chat", timeoutMs: 60_000 }).then((all) => all.slice(-1));
    await execution.cancel();
    const view = await untilStatus(session, execution.handle.taskId, "cancelled");
    expect(view.status, JSON.stringify(view.raw).slice(0, 1500)).toBe("cancelled");
    await opencode.model.waitForEnd(chat!, { timeoutMs: 60_000 });
    return execution.handle.taskId;
  }

  const chats = () => opencode.model.requests.filter((r) => r.kind === "chat").length;

  /** A session with one finished turn, started through the task client, for oc_send to follow up in. */
  async function finishedSession(session: Awaited<ReturnType<typeof taskClient>>["session"], task: string): Promise<string> {
    opencode.model.queue(text(`Ready: ${task}`));
    const first = await (await session.callTool("oc_delegate", { task })).settle();
    const data = structured(first.outcome as Outcome)!;
    expect(data.status).toBe("done");
    return data.session_id;
  }

  /** The server now running SIGKILLed and started again on the same state dir and port. */
  async function restart() {
    server.child.kill("SIGKILL");
    await server.exit;
    server = await startHttpCli(["--port", String(port)], env());
    return taskClient();
  }

  beforeAll(async () => {
    opencode = await major.start();
    stateDir = join(opencode.root, "state");
    reader = await Conductor.connect({ url: opencode.url, password: opencode.password, directory: opencode.directory, stateDir });
    port = await freePort();
    server = await startHttpCli(["--port", String(port)], env());
  });
  afterAll(async () => {
    for (const c of open) await c.close();
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGTERM");
      await server.exit;
    }
    reader?.close();
    await opencode?.stop();
  });

  describe("oc_delegate as an MCP task", () => {
    it("server/discover declares the extension; a task handle at once, polls show it working, settle() is opencode's record", async () => {
      const { client, session, raw } = await taskClient();
      expect((client.getServerCapabilities() as { extensions?: Record<string, unknown> }).extensions?.["io.modelcontextprotocol/tasks"]).toEqual({});
      opencode.model.queue(text("The report is written.", { delayMs: 8_000 }));
      const before = opencode.model.requests.length;
      const execution = await session.callTool("oc_delegate", { task: "Write the report" });
      expect(execution.kind).toBe("task");
      // The handle came while the model was still answering: the work goes on after the call.
      const chat = opencode.model.requests.slice(before).find((r) => r.kind === "chat");
      expect(chat?.endedAt).toBeUndefined();
      const created = raw.exchanges.find((e) => e.request.method === "tools/call")!.response.result!;
      expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: null, pollIntervalMs: 2000 });
      expect(created.taskId).toMatch(/^dlg_[A-Za-z0-9_-]{22}$/);
      expect(created).not.toHaveProperty("content");
      const statuses: string[] = [];
      const { outcome } = await execution.settle({ onEvent: (e) => void (e.type === "task" && statuses.push(e.task.status)) });
      expect(statuses).toContain("working");
      const polls = raw.exchanges.filter((e) => e.request.method === "tasks/get");
      expect(polls.map((p) => p.response.result?.status)).toContain("working");
      expect(polls.at(-1)!.response.result?.status).toBe("completed");
      expect(polls.every((p) => p.request.params?.taskId === created.taskId && p.response.result?.resultType === "complete")).toBe(true);
      const { truth } = await expectRecordedTurn(outcome as Outcome);
      expect(truth).toMatchObject({ status: "done", answer: "The report is written." });
    });

    it("an approval is asked through the task (input_required with today's form) and answered with tasks/update; the command runs once in the same session", async () => {
      const marker = join(stateDir, "..", "task-approved.txt");
      opencode.model.queue(major.shell(`echo approved > ${marker}`), text("Done after approval."));
      const forms: unknown[] = [];
      const { session, raw } = await taskClient((params) => (forms.push(params), { action: "accept", content: { decision: "once" } }));
      const execution = await session.callTool("oc_delegate", { task: "Run the command" });
      expect(execution.kind).toBe("task");
      const { outcome } = await execution.settle();
      expect(outcome.status, `${JSON.stringify(outcome).slice(0, 800)}\n${JSON.stringify(raw.exchanges.slice(-3)).slice(0, 1500)}`).toBe("completed");
      const data = structured(outcome as Outcome)!;
      expect(readFileSync(marker, "utf8").trim()).toBe("approved");
      const asked = raw.exchanges.find((e) => e.response.result?.status === "input_required")!.response.result!;
      const [key, request] = Object.entries(asked.inputRequests as Record<string, { method: string; params: { message: string } }>)[0]!;
      expect(key).toMatch(major.requestKey);
      expect(request.method).toBe("elicitation/create");
      expect(request.params.message).toContain(`echo approved > ${marker}`);
      expect(raw.exchanges.find((e) => e.request.method === "tasks/update")!.request.params!.inputResponses).toEqual({
        [key]: { action: "accept", content: { decision: "once" } },
      });
      expect(forms).toHaveLength(1);
      const truth = await recorded(data.session_id);
      expect(truth.status).toBe("done");
      expect(truth.tools?.map((t) => t.status)).toEqual(["completed"]);
      expect([data.status, data.answer]).toEqual([truth.status, truth.answer]);
      expect(auditLines(stateDir).find((e) => e.session_id === data.session_id && e.by === "human")).toMatchObject({
        tool: "oc_delegate",
        decision: "once",
        detail: { request_id: key, task_id: execution.kind === "task" ? execution.handle.taskId : "" },
      });
    });

    it("tasks/cancel interrupts the opencode session; the task ends cancelled and opencode recorded the interruption", async () => {
      opencode.model.queue(hang({ text: "partial " }));
      const before = chats();
      const { session } = await taskClient();
      const taskId = await cancelAtTheModel(session, await session.callTool("oc_delegate", { task: "Work until stopped" }), before);
      const sessionId = (await reader.delegations.get(taskId)).sessions[0]!;
      expect((await recorded(sessionId)).status).toBe("interrupted");
    });

    it("the server SIGKILLed mid-task and started again on the same state dir: the same task id settles with opencode's record", async () => {
      opencode.model.queue(text("Finished after the restart.", { delayMs: 8_000 }));
      const before = chats();
      const first = await taskClient();
      const execution = await first.session.callTool("oc_delegate", { task: "Outlive the server" });
      await atTheModel(before);
      const { taskId, outcome } = await settleAfterRestart(execution, restart);
      expect(taskId).toBe(execution.handle?.taskId);
      const { truth } = await expectRecordedTurn(outcome as Outcome);
      expect(truth).toMatchObject({ status: "done", answer: "Finished after the restart." });
    });

    it("the same request_id twice (a client sending the call again from a new session) gives one task and starts one agent", async () => {
      opencode.model.queue(text("Only once.", { delayMs: 2_000 }));
      const before = chats();
      const [one, two] = await Promise.all([taskClient(), taskClient()]);
      const [a, b] = await Promise.all([
        one.session.callTool("oc_delegate", { task: "Do it exactly once", request_id: "task-once-1" }),
        two.session.callTool("oc_delegate", { task: "Do it exactly once", request_id: "task-once-1" }),
      ]);
      if (a.kind !== "task" || b.kind !== "task") throw new Error("expected tasks");
      expect(b.handle.taskId).toBe(a.handle.taskId);
      const [x, y] = await Promise.all([a.settle(), b.settle()]);
      const data = structured(x.outcome as Outcome)!;
      expect(structured(y.outcome as Outcome)!.session_id).toBe(data.session_id);
      expect(chats() - before).toBe(1);
      const truth = await recorded(data.session_id);
      expect(truth.users).toBe(1);
      expect([data.status, data.answer]).toEqual([truth.status, truth.answer]);
    });
  });

  describe("oc_send as an MCP task", () => {
    it("a handle at once while the message's turn runs; settle() is oc_send's answer with the turn as opencode recorded it", async () => {
      const { session, raw } = await taskClient();
      const sessionId = await finishedSession(session, "Start the notes");
      opencode.model.queue(text("The notes are extended.", { delayMs: 6_000 }));
      const before = chats();
      const execution = await session.callTool("oc_send", { session_id: sessionId, message: "Extend the notes" });
      if (execution.kind !== "task") throw new Error("expected a task");
      const created = raw.exchanges.filter((e) => e.request.method === "tools/call").at(-1)!.response.result!;
      expect(created).toMatchObject({ resultType: "task", status: "working", taskId: execution.handle.taskId });
      const { outcome } = await execution.settle();
      expect(outcome.status, JSON.stringify(outcome).slice(0, 800)).toBe("completed");
      const polls = raw.exchanges.filter((e) => e.request.method === "tasks/get" && e.request.params?.taskId === execution.handle.taskId);
      expect(polls.map((p) => p.response.result?.status)).toContain("working");
      expect(chats() - before).toBe(1);
      const data = structured(outcome as Outcome)!;
      const truth = await recorded(sessionId);
      expect(truth).toMatchObject({ status: "done", answer: "The notes are extended.", users: 2 });
      expect([data.session_id, data.delivery, data.status, data.answer]).toEqual([sessionId, "queue", truth.status, truth.answer]);
      expect(textOf(outcome as Outcome)).toMatch(/^Sent \(queue\)\.\nDONE · /);
    });

    it("an approval in the message's turn goes through tasks/update; the command runs and the task completes as recorded", async () => {
      const marker = join(stateDir, "..", "send-approved.txt");
      const { session, raw } = await taskClient(() => ({ action: "accept", content: { decision: "once" } }));
      const sessionId = await finishedSession(session, "Prepare the command");
      opencode.model.queue(major.shell(`echo sent > ${marker}`), text("Ran it after the follow-up."));
      const execution = await session.callTool("oc_send", { session_id: sessionId, message: "Now run the command" });
      const { outcome } = await execution.settle();
      expect(outcome.status, JSON.stringify(outcome).slice(0, 800)).toBe("completed");
      const asked = raw.exchanges.find((e) => e.response.result?.status === "input_required" && e.request.params?.taskId === execution.handle?.taskId);
      expect(Object.keys((asked?.response.result?.inputRequests as object | undefined) ?? {})[0]).toMatch(major.requestKey);
      expect(readFileSync(marker, "utf8").trim()).toBe("sent");
      const data = structured(outcome as Outcome)!;
      const truth = await recorded(sessionId);
      expect(truth.status).toBe("done");
      expect([data.status, data.answer]).toEqual([truth.status, truth.answer]);
    });

    it("tasks/cancel interrupts the turn the message started: cancelled, and opencode recorded the interruption", async () => {
      const { session } = await taskClient();
      const sessionId = await finishedSession(session, "Begin the long job");
      opencode.model.queue(hang({ text: "partial " }));
      const before = chats();
      await cancelAtTheModel(session, await session.callTool("oc_send", { session_id: sessionId, message: "Go on until stopped" }), before);
      expect(await recorded(sessionId)).toMatchObject({ status: "interrupted", users: 2 });
    });

    it("tasks/cancel of a message queued behind another turn interrupts nothing: refused with why, and the message runs after that turn as opencode records it", async () => {
      const { session } = await taskClient();
      const sessionId = await finishedSession(session, "Open the ticket");
      // The first job stays at the model until the cancel has been refused: the message must still be queued then.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      opencode.model.queue(text("The first job is done.", { until: released }), text("The queued job is done."));
      const before = chats();
      await reader.send(sessionId, "Do the first job", { wait: false });
      const [chat] = await opencode.model.waitForRequests(before + 1, { kind: "chat", timeoutMs: 60_000 }).then((all) => all.slice(-1));
      const execution = await session.callTool("oc_send", { session_id: sessionId, message: "Then do the queued job" });
      if (execution.kind !== "task") throw new Error("expected a task");
      await expect(execution.cancel()).rejects.toThrow(
        /Not cancelled: the message is queued in opencode session ses_\S+ behind a turn that is not this message's, and opencode \S+ cannot withdraw a queued message\. It will run after the current turn; nothing was interrupted\. To stop everything, interrupting the session \(oc_interrupt\)/,
      );
      // The other turn's model call goes on, and the task is not cancelled.
      expect(chat!.endedAt).toBeUndefined();
      expect((await reader.delegations.get(execution.handle.taskId)).status).toBe("working");
      release();
      const { outcome } = await execution.settle();
      const { truth } = await expectRecordedTurn(outcome as Outcome);
      expect(truth).toMatchObject({ status: "done", answer: "The queued job is done.", users: 3 });
      // Re-read: the first job's reply completed with its text and no error (it was never interrupted).
      const replies = (await reader.engine.messages(sessionId)).filter((m) => m.info.role === "assistant");
      const first = replies.find((m) => m.parts.some((p) => p.type === "text" && p.text === "The first job is done."));
      expect(first?.info).not.toHaveProperty("error");
      expect(chats() - before).toBe(2);
    });

    it("the server SIGKILLed while the message's turn runs: the same task id settles with opencode's record", async () => {
      const first = await taskClient();
      const sessionId = await finishedSession(first.session, "Open the log");
      opencode.model.queue(text("Logged after the restart.", { delayMs: 8_000 }));
      const before = chats();
      const execution = await first.session.callTool("oc_send", { session_id: sessionId, message: "Write the log entry" });
      await atTheModel(before);
      const { taskId, outcome } = await settleAfterRestart(execution, restart);
      expect(taskId).toBe(execution.handle?.taskId);
      const { data, truth } = await expectRecordedTurn(outcome as Outcome);
      expect(truth).toMatchObject({ status: "done", answer: "Logged after the restart.", users: 2 });
      expect([data.session_id, data.delivery]).toEqual([sessionId, "queue"]);
    });

    it("the same request_id twice from two clients: one task, one message sent", async () => {
      const [one, two] = await Promise.all([taskClient(), taskClient()]);
      const sessionId = await finishedSession(one.session, "Draft the summary");
      opencode.model.queue(text("Summary sent once.", { delayMs: 2_000 }));
      const before = chats();
      const call = { session_id: sessionId, message: "Send the summary once", request_id: "send-once-1" };
      const [a, b] = await Promise.all([one.session.callTool("oc_send", call), two.session.callTool("oc_send", call)]);
      if (a.kind !== "task" || b.kind !== "task") throw new Error("expected tasks");
      expect(b.handle.taskId).toBe(a.handle.taskId);
      const [x, y] = await Promise.all([a.settle(), b.settle()]);
      expect(structured(y.outcome as Outcome)).toEqual(structured(x.outcome as Outcome));
      expect(chats() - before).toBe(1);
      const truth = await recorded(sessionId);
      expect(truth).toMatchObject({ status: "done", answer: "Summary sent once.", users: 2 });
      expect(structured(x.outcome as Outcome)!.answer).toBe(truth.answer);
    });
  });

  it("a client without the extension gets today's answers; tasks/get without it is -32021, an unknown task -32602", async () => {
    opencode.model.queue(text("Plain answer."));
    const client = new Client({ name: "no-tasks", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    open.push({ close: () => client.close() });
    const r = await client.callTool({ name: "oc_delegate", arguments: { task: "Answer plainly" } }, { timeout: 120_000 });
    const data = r.structuredContent as Structured;
    const truth = await recorded(data.session_id);
    expect([data.status, data.answer]).toEqual([truth.status, truth.answer]);
    expect(truth.status).toBe("done");
    // oc_send answers at once, as it always did (its wait is oc_wait).
    opencode.model.queue(text("Plain follow-up."));
    const sent = await client.callTool({ name: "oc_send", arguments: { session_id: data.session_id, message: "One more thing" } });
    expect(sent.structuredContent).toMatchObject({ delivery: "queue", status: "running", session_id: data.session_id });
    const bare = taskDispatch(server.url);
    const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
    const refused = await bare.dispatch({ method: "tasks/get", params: { taskId: "dlg_AAAAAAAAAAAAAAAAAAAAAA", _meta: meta } });
    expect(refused).toMatchObject({ kind: "error", error: { code: -32021 } });
    const tasksMeta = { ...meta, "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } } };
    const unknown = await bare.dispatch({ method: "tasks/get", params: { taskId: "dlg_AAAAAAAAAAAAAAAAAAAAAA", _meta: tasksMeta } });
    expect(unknown).toMatchObject({ kind: "error", error: { code: -32602 } });
    const after = await reader.wait(data.session_id, { timeoutMs: 60_000 });
    expect((await recorded(data.session_id)).answer).toBe(after.answer);
  });
}
