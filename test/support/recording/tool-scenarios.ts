// The scenarios `npm run record -- --tools` runs: real MCP tool calls (through the in-memory MCP
// server, mcp-memory.ts) against a real opencode with the scripted model. Only the tools' own
// traffic is recorded, plus a closing read of every session they touched (what opencode recorded,
// for the unit tests to compare a status with). Setup (the model's script, a session to work on)
// goes through an unrecorded client. The fixtures land in test/fixtures/<version>/tools/ and the
// tool unit tests (test/unit/tools/) replay them by making the same calls.
import type { OpencodeClient } from "../../../src/client/index.js";
import type { ToolCall } from "../mcp-client.js";
import type { StartOpencodeOptions, TestOpencode } from "../opencode.js";
import { delay, hang, httpError, text, toolCall, type Step } from "../scripted-model.js";
import { createSession, promptAndWait } from "../turns.js";
import { MISSING_SESSION } from "./scenarios.js";
import { COLOR_QUESTION } from "../questions.js";

/** What a scenario's calls may refer to: setup's values and earlier results (`last`, `results`). */
export interface ToolVars {
  setup: Record<string, string>;
  results: ToolCall[];
}

export interface ToolStep {
  tool: string;
  args: Record<string, unknown> | ((vars: ToolVars) => Record<string, unknown>);
}

export interface ToolScenario {
  name: string;
  server?: StartOpencodeOptions;
  /** Environment of the MCP server (over all toolsets and a temp state dir). */
  env?: Record<string, string>;
  /** Unrecorded: queue the model's answers, make a session to work on. Returns values for the calls. */
  setup?(client: OpencodeClient, server: TestOpencode): Promise<Record<string, string>>;
  calls: ToolStep[];
}

/** Queues `steps` on the model for the next new session. */
const script =
  (...steps: Array<Step | ((server: TestOpencode) => Step)>) =>
  async (_client: OpencodeClient, server: TestOpencode) => {
    server.model.queue(...steps.map((s) => (typeof s === "function" ? s(server) : s)));
    return {};
  };

/** A session with one finished text turn; the model then answers `next`. */
const finishedSession =
  (...next: Step[]) =>
  async (client: OpencodeClient, server: TestOpencode) => {
    const session = await createSession(client, "worked on");
    server.model.forSession(session.id).queue(text("First answer."), ...next);
    await promptAndWait(client, session.id, "first task");
    return { session: session.id };
  };

const session = (vars: ToolVars) => vars.setup.session!;
const first = (vars: ToolVars) => vars.results[0]!.data.session_id as string;
/** The first pending request of the first call's answer (a blocked oc_delegate). */
const pendingId = (vars: ToolVars) => (vars.results[0]!.data.pending as Array<{ id: string }>)[0]!.id;

export const toolScenarios: ToolScenario[] = [
  {
    name: "delegate-done",
    setup: script((server) => toolCall("write", { filePath: `${server.directory}/hello.txt`, content: "hello\n" }), text("Wrote hello.txt.")),
    calls: [
      { tool: "oc_delegate", args: { task: "write hello.txt", title: "write hello" } },
      { tool: "oc_result", args: (v) => ({ session_id: first(v) }) },
      { tool: "oc_wait", args: (v) => ({ session_id: first(v) }) },
    ],
  },
  {
    name: "delegate-error",
    setup: script(httpError(400)),
    calls: [{ tool: "oc_delegate", args: { task: "fail", title: "bad request" } }],
  },
  {
    name: "delegate-blocked-permission",
    server: { permission: { bash: "ask" } },
    setup: script(toolCall("bash", { command: "echo x > approved.txt", description: "approve me" }), text("Ran it.")),
    calls: [
      { tool: "oc_delegate", args: { task: "run echo", title: "needs approval", approvals: "return" } },
      { tool: "oc_pending", args: {} },
      { tool: "oc_answer", args: (v) => ({ request_id: pendingId(v), decision: "once" }) },
      { tool: "oc_wait", args: (v) => ({ session_id: first(v), approvals: "return" }) },
    ],
  },
  {
    name: "delegate-blocked-question",
    setup: script(
      toolCall("question", {
        questions: [COLOR_QUESTION],
      }),
      text("Blue it is."),
    ),
    calls: [
      { tool: "oc_delegate", args: { task: "pick a color", title: "asks", approvals: "return" } },
      { tool: "oc_answer", args: (v) => ({ request_id: pendingId(v), answers: [["Blue"]] }) },
      { tool: "oc_wait", args: (v) => ({ session_id: first(v), approvals: "return" }) },
    ],
  },
  {
    name: "delegate-running-interrupt",
    setup: script(hang({ text: "working" })),
    calls: [
      { tool: "oc_delegate", args: { task: "hang", title: "hangs", wait: false } },
      { tool: "oc_wait", args: (v) => ({ session_id: first(v), timeout_s: 1 }) },
      { tool: "oc_interrupt", args: (v) => ({ session_id: first(v) }) },
      { tool: "oc_result", args: (v) => ({ session_id: first(v) }) },
    ],
  },
  {
    name: "send-queue",
    setup: finishedSession(text("Second answer.")),
    calls: [
      { tool: "oc_send", args: (v) => ({ session_id: session(v), message: "second task" }) },
      { tool: "oc_wait", args: (v) => ({ session_id: session(v) }) },
    ],
  },
  {
    name: "send-steer",
    setup: finishedSession(hang({ text: "slow" }), text("Steered answer.")),
    calls: [
      { tool: "oc_send", args: (v) => ({ session_id: session(v), message: "slow task" }) },
      { tool: "oc_send", args: (v) => ({ session_id: session(v), message: "do this instead", delivery: "steer" }) },
      { tool: "oc_wait", args: (v) => ({ session_id: session(v) }) },
    ],
  },
  {
    name: "missing-session",
    calls: [
      { tool: "oc_wait", args: { session_id: MISSING_SESSION } },
      { tool: "oc_result", args: { session_id: MISSING_SESSION } },
      { tool: "oc_send", args: { session_id: MISSING_SESSION, message: "hi" } },
      { tool: "oc_interrupt", args: { session_id: MISSING_SESSION } },
      { tool: "oc_session", args: { session_id: MISSING_SESSION, action: "info" } },
      { tool: "oc_answer", args: { request_id: "per_0000000000000000000000000", decision: "once" } },
    ],
  },
  {
    name: "session-actions",
    setup: finishedSession(),
    calls: [
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "info" }) },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "messages", limit: 10 }) },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "diff" }) },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "todo" }) },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "export" }) },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "rename", title: "renamed" }) },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "set_model", model: "fake/backup" }) },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "set_agent", agent: "plan" }) },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "fork" }) },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "abort" }) },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "shell", command: "echo shell-out" }) },
      // Back to before the first prompt (the first message listed by the messages call), then undone.
      {
        tool: "oc_session",
        args: (v) => ({
          session_id: session(v),
          action: "revert",
          message_id: (v.results[1]!.data.result as { messages: Array<{ id: string }> }).messages[0]!.id,
        }),
      },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "unrevert" }) },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "compact" }) },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "archive" }) },
      { tool: "oc_sessions", args: { limit: 5 } },
      { tool: "oc_session", args: (v) => ({ session_id: session(v), action: "delete" }) },
    ],
  },
  {
    name: "ask-and-parallel",
    setup: script(text("It is a test project."), delay(200, text("Task A done.")), text("Task B done.")),
    calls: [
      { tool: "oc_ask", args: { question: "What is this project?" } },
      {
        tool: "oc_delegate_parallel",
        args: {
          tasks: [
            { task: "task A", title: "A" },
            { task: "task B", title: "B" },
          ],
          concurrency: 1,
        },
      },
    ],
  },
  {
    name: "delegate-budget",
    setup: async (_client, server) => {
      const usage = { prompt_tokens: 1000, completion_tokens: 20 };
      const file = (n: number) => `${server.directory}/budget-${n}.txt`;
      server.model.queue(
        toolCall("write", { filePath: file(1), content: "1\n" }, { usage }),
        toolCall("write", { filePath: file(2), content: "2\n" }, { usage, delayMs: 4000 }),
        text("All written.", { usage }),
      );
      return {};
    },
    calls: [{ tool: "oc_delegate", args: { task: "write files", title: "budget", permissions: "auto", max_tokens: 50 } }],
  },
  {
    name: "delegate-fallback",
    setup: async (_client, server) => {
      server.model.for("scripted").queue(httpError(400));
      server.model.for("backup").queue(text("Answered by the backup."));
      return {};
    },
    calls: [{ tool: "oc_delegate", args: { task: "fall back", title: "fallback", model: "fake/scripted", fallback_models: ["fake/backup"] } }],
  },
  {
    name: "delegate-request-id",
    setup: script(text("Once.")),
    calls: [
      { tool: "oc_delegate", args: { task: "only once", title: "idempotent", request_id: "job-1" } },
      { tool: "oc_delegate", args: { task: "only once", title: "idempotent", request_id: "job-1" } },
    ],
  },
  {
    name: "status",
    calls: [{ tool: "oc_status", args: {} }],
  },
  {
    // The catalogue of operations: the connected server's own when its spec differs from the pin;
    // what opencode recorded is the version it reported (and its document, when that was read).
    name: "api-ops",
    calls: [
      { tool: "oc_api_ops", args: { limit: 5 } },
      { tool: "oc_api_ops", args: { search: "session messages" } },
      { tool: "oc_api_ops", args: { operation: "session.prompt" } },
    ],
  },
  {
    // A task, then its audit line read back: the line's session, outcome, model and tokens are
    // what opencode recorded of the turn.
    name: "audit",
    setup: script(text("Audited.")),
    calls: [
      { tool: "oc_delegate", args: { task: "an audited task", title: "audited" } },
      { tool: "oc_audit", args: {} },
      { tool: "oc_audit", args: (v) => ({ session_id: first(v) }) },
      { tool: "oc_audit", args: { tool: "oc_delegate", since: "1h" } },
    ],
  },
  {
    // No private instance on a shared server: opencode hears nothing of either call.
    name: "instances",
    calls: [
      { tool: "oc_instances", args: { action: "list" } },
      { tool: "oc_instances", args: { action: "stop", pid: 4242 } },
    ],
  },
  {
    name: "server-reads",
    calls: [
      { tool: "oc_models", args: {} },
      { tool: "oc_models", args: { search: "backup" } },
      { tool: "oc_catalog", args: { kind: "agents" } },
      { tool: "oc_catalog", args: { kind: "commands" } },
    ],
  },
  {
    name: "api",
    // Sessions enough that a list is longer than a small max_chars.
    setup: async (client) => {
      for (let n = 1; n <= 4; n++) await createSession(client, `an earlier session with a long title, number ${n}`);
      return {};
    },
    calls: [
      { tool: "oc_api", args: { operation: "session.create", body: { title: "made with oc_api" } } },
      { tool: "oc_api", args: (v) => ({ method: "GET", path: `/session/${(v.results[0]!.data.result as { id: string }).id}` }) },
      { tool: "oc_api", args: { operation: "session.get", params: { sessionID: MISSING_SESSION } } },
      { tool: "oc_api", args: { operation: "session.list", max_chars: 200 } },
      { tool: "oc_api", args: { operation: "session.prompt_async", params: { sessionID: MISSING_SESSION }, body: { parts: [{ type: "txt" }] } } },
      { tool: "oc_api", args: { operation: "session.list", query: { limit: "2" } } },
      { tool: "oc_api", args: { operation: "v2.session.list", max_chars: 300 } },
      { tool: "oc_api", args: { operation: "global.health" } },
    ],
  },
];
