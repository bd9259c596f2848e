// A delegation as an MCP Task (io.modelcontextprotocol/tasks, 2026-07-28) whose agent starts a
// sub-agent in the background, run by both majors (test/e2e/mcp/subagent-background.test.ts on 1.x
// with its experimental flag, test/e2e-v2/mcp-subagent-background.test.ts on 2.x) against the built
// server over Streamable HTTP, real opencode and the scripted model. The parent's turn ends while the
// child works; when the child ends, opencode writes a notice into the parent session, which the
// parent's agent answers in a turn of its own. Compared with opencode's record, re-read from the
// server each time: the Task ends `completed` with the delegated prompt's turn; while the notice's
// turn runs and after it ended, tasks/get still answers that same result (nothing retroactive);
// oc_result says the session is busy with a running turn, then idle with the notice's turn done, and
// oc_wait on the session ends with the notice's reply. A child that ends while the parent's turn
// runs: the Task is the turn opencode recorded as the delegation's (1.x: the prompt's, the notice
// queued behind it; 2.x: the one execution's last, the notice's) and keeps it. Facts:
// docs/opencode-behaviour.md §5 (1.x), docs/opencode-2x-behaviour.md "Sub-agents in the background" (2.x).
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpCli, type HttpCli } from "./http-cli.js";
import type { TestOpencode } from "./opencode.js";
import { delay, text, type toolCall } from "./scripted-model.js";
import { freePort, taskClient, taskDispatch } from "./task-dispatch.js";

/** What an answer says of a turn, beside its status: the same fields as opencode's record of it. */
const turnOf = (s: Structured) => ({ message_id: s.message_id, answer: s.answer, input: s.tokens?.input, output: s.tokens?.output });
const recordedAs = (t: RecordedTurn) => ({ message_id: t.id, answer: t.answer, input: t.tokens.input, output: t.tokens.output });

/** One turn as opencode recorded it: the message that started it and its replies. */
export interface RecordedTurn {
  /** The user message (1.x) or input (2.x) the turn answers. */
  id: string;
  /** The text of the turn's last reply. */
  answer: string;
  /** Its last reply finished (`stop`), without an error. */
  done: boolean;
  /** The turn's replies' tokens, summed. */
  tokens: { input: number; output: number };
}

/** The parent session as opencode recorded it now. */
export interface BackgroundRecord {
  /** The sub-agent's session (the parent's one child). */
  child: string;
  /** The delegated prompt's turn. */
  prompt: RecordedTurn;
  /** opencode's notice of the child's end and the turn answering it, once written. */
  notice?: RecordedTurn & { childID: string };
  /** The parent session is busy (1.x `session.status`) or active (2.x `session.active`). */
  busy: boolean;
}

export interface BackgroundMajor {
  /** The major's opencode, its `general` agent on the model `backup`, background sub-agents on. */
  start(): Promise<TestOpencode>;
  /** The agent's call starting a sub-agent in the background, in this major's words. */
  backgroundCall(description: string): ReturnType<typeof toolCall>;
  /** opencode's record of the parent session, re-read from the server. */
  record(opencode: TestOpencode, sessionId: string): Promise<BackgroundRecord>;
  /**
   * A child that ends while the parent's turn runs: which turn the delegation is. 1.x queues the
   * notice behind the running turn, which ends with its own last reply (`prompt`); 2.x admits it
   * into the running execution, one outcome for both, whose last turn is the notice's (`notice`).
   */
  joined: "prompt" | "notice";
}

type Structured = { session_id: string; status: string; answer: string; message_id?: string; tokens?: { input: number; output: number } };
const structuredOf = (result: unknown) => (result as { structuredContent: Structured }).structuredContent;
const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
};

export function backgroundSubagentSuite(major: BackgroundMajor): void {
  let opencode: TestOpencode;
  let server: HttpCli;
  let plain: Client;
  const open: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    opencode = await major.start();
    const env = {
      OPENCODE_URL: opencode.url,
      OPENCODE_PASSWORD: opencode.password,
      OPENCODE_CONDUCTOR_DIRECTORY: opencode.directory,
      OPENCODE_CONDUCTOR_STATE_DIR: join(opencode.root, "state"),
    };
    server = await startHttpCli(["--port", String(await freePort())], env);
    // oc_result and oc_wait from a client without the extension: their answers come back as they are.
    plain = new Client({ name: "no-tasks", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await plain.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  });
  afterAll(async () => {
    for (const c of open) await c.close();
    await plain?.close();
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGTERM");
      await server.exit;
    }
    await opencode?.stop();
  });

  const tool = async (name: string, args: Record<string, unknown>) => {
    const r = await plain.callTool({ name, arguments: args }, { timeout: 120_000 });
    expect(r.isError, JSON.stringify(r).slice(0, 800)).toBeFalsy();
    return r.structuredContent as Structured & { state?: string };
  };

  /** tasks/get, as a requester that holds only the task id asks it. */
  const taskGet = async (taskId: string) => {
    const got = await taskDispatch(server.url).dispatch({ method: "tasks/get", params: { taskId, _meta: meta } });
    if (got.kind !== "result") throw new Error(`tasks/get: ${JSON.stringify(got.error)}`);
    return got.result as unknown as { status: string; result?: unknown };
  };

  /** `oc_delegate` as a task-augmented call (2026-07-28), settled: the task's handle and its result's structured content. */
  const delegateAsTask = async (task: string) => {
    const c = await taskClient(server.url);
    open.push(c);
    const execution = await c.session.callTool("oc_delegate", { task });
    if (execution.kind !== "task") throw new Error(`oc_delegate answered ${execution.kind}, not a task`);
    const { outcome } = await execution.settle();
    expect(outcome.status, JSON.stringify(outcome).slice(0, 800)).toBe("completed");
    return { execution, settled: structuredOf((outcome as { result?: unknown }).result) };
  };

  describe("a background sub-agent in a delegation run as an MCP task", () => {
    it("the task completes with the delegated prompt's turn and keeps that result while and after opencode's notice is answered; oc_result and oc_wait describe the notice's turn", async () => {
      opencode.model.for("scripted").queue(
        major.backgroundCall("background work"),
        text("parent: started it"),
        // The reply to opencode's notice, slow enough to read the session and the task while it runs.
        delay(4_000, text("parent: the child is done")),
      );
      opencode.model.for("backup").queue(delay(4_000, text("child: done")));
      const { execution, settled } = await delegateAsTask("start a sub-agent in the background");

      // opencode's record then: the delegated prompt's turn over, the child still working.
      const atEnd = await major.record(opencode, settled.session_id);
      expect(atEnd.prompt.done).toBe(true);
      expect(atEnd.busy).toBe(false);
      expect(settled.status).toBe("done");
      expect(turnOf(settled)).toEqual(recordedAs(atEnd.prompt));

      const tasksGet = () => taskGet(execution.handle.taskId);
      const first = await tasksGet();
      expect(first.status).toBe("completed");
      expect(structuredOf(first.result)).toEqual(settled);

      // The child ends; opencode's notice starts the parent's turn answering it (the parent's third model call).
      await opencode.model.waitForRequests(3, { sessionId: settled.session_id, kind: "chat", timeoutMs: 60_000 });
      const running = await major.record(opencode, settled.session_id);
      expect(running.notice).toMatchObject({ childID: running.child, done: false });
      expect(running.busy).toBe(true);
      const busyState = await tool("oc_result", { session_id: settled.session_id });
      expect([busyState.state, busyState.status, busyState.message_id]).toEqual(["busy", "running", running.notice!.id]);
      // The task is what it was: the delegated prompt's turn, done.
      expect(await tasksGet()).toMatchObject({ status: "completed", result: first.result });

      // oc_wait follows the notice's turn to its end: opencode's record of it.
      const waited = await tool("oc_wait", { session_id: settled.session_id });
      const after = await major.record(opencode, settled.session_id);
      expect(after.busy).toBe(false);
      expect(after.notice).toMatchObject({ done: true });
      expect(after.prompt).toEqual(atEnd.prompt);
      expect(waited.status).toBe("done");
      expect(turnOf(waited)).toEqual(recordedAs(after.notice!));
      const idleState = await tool("oc_result", { session_id: settled.session_id });
      expect([idleState.state, idleState.status]).toEqual(["idle", "done"]);
      expect(turnOf(idleState)).toEqual(recordedAs(after.notice!));
      expect(await tasksGet()).toMatchObject({ status: "completed", result: first.result });
    });

    it("a child that ends while the parent's turn runs: the task completes with the turn opencode recorded as the delegation's and keeps it; oc_wait and oc_result describe the notice's turn", async () => {
      opencode.model.for("scripted").queue(
        major.backgroundCall("quick work"),
        // The parent's next step outlasts the child, so the notice arrives while the turn runs.
        delay(3_000, text("parent: started it")),
        delay(2_000, text("parent: the child is done")),
      );
      opencode.model.for("backup").queue(text("child: done"));
      const { execution, settled } = await delegateAsTask("start a quick sub-agent in the background");

      // opencode's record then: the notice written while the parent's turn ran, the delegation's turn over.
      const atEnd = await major.record(opencode, settled.session_id);
      expect(atEnd.notice).toMatchObject({ childID: atEnd.child });
      const delegated = major.joined === "prompt" ? atEnd.prompt : atEnd.notice!;
      expect(delegated.done).toBe(true);
      expect(settled.status).toBe("done");
      expect(turnOf(settled)).toEqual(recordedAs(delegated));
      const tasksGet = () => taskGet(execution.handle.taskId);
      const first = await tasksGet();
      expect(first.status).toBe("completed");
      expect(structuredOf(first.result)).toEqual(settled);

      const waited = await tool("oc_wait", { session_id: settled.session_id });
      const after = await major.record(opencode, settled.session_id);
      expect(after.busy).toBe(false);
      expect(after.notice).toMatchObject({ done: true });
      expect(waited.status).toBe("done");
      expect(turnOf(waited)).toEqual(recordedAs(after.notice!));
      const idleState = await tool("oc_result", { session_id: settled.session_id });
      expect([idleState.state, idleState.status]).toEqual(["idle", "done"]);
      expect(turnOf(idleState)).toEqual(recordedAs(after.notice!));
      expect(await tasksGet()).toMatchObject({ status: "completed", result: first.result });
    });
  });
}
