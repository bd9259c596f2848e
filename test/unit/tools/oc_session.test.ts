// oc_session: schema, the input errors it refuses before any request (each action's required
// field), and every action on a recorded session (session-actions: info, messages, diff, todo,
// export, rename, set_model, set_agent, fork, abort, shell, revert, unrevert, compact, archive,
// delete), each compared with what opencode answered or recorded. merge and remove_worktree work on
// git and the worktree registry: test/unit/core/worktrees/ and the worktree e2e tests.
import { describe, expect, it } from "vitest";
import { MISSING_SESSION } from "../../support/recording/scenarios.js";
import { describeRecordedCalls, expectCleanError, recordedMessages, useNoOpencode, useToolReplay } from "../../support/tool-replay.js";
import { expectToolsnap, inputProperties, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_session";
const ACTIONS = [
  "info",
  "messages",
  "diff",
  "fork",
  "compact",
  "rename",
  "archive",
  "delete",
  "abort",
  "revert",
  "unrevert",
  "shell",
  "export",
  "todo",
  "set_model",
  "set_agent",
  "merge",
  "remove_worktree",
];

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("needs a session and an action; lists every action", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required).toEqual(["session_id", "action"]);
    expect(inputProperties(tool).action!.enum).toEqual(ACTIONS);
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });
});

describe(`${TOOL} input errors (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  const on = (action: string, extra: Record<string, unknown> = {}) => ({ session_id: MISSING_SESSION, action, ...extra });
  it.each([
    ["an unknown action", on("explode"), /Invalid option: expected one of "info"\|"messages"/],
    ["rename without a title", on("rename"), /action "rename" needs `title`/],
    ["revert without a message id", on("revert"), /action "revert" needs `message_id`/],
    ["shell without a command", on("shell"), /action "shell" needs `command`/],
    ["set_model without a model", on("set_model"), /action "set_model" needs `model`/],
    ["set_agent without an agent", on("set_agent"), /action "set_agent" needs `agent`/],
    // The worktree actions read the state dir's worktree registry, never opencode.
    ["merge of a session that is no worktree task", on("merge", { also: [MISSING_SESSION] }), /is not a worktree task \(none is on record for it/],
    ["remove_worktree of a session that is no worktree task", on("remove_worktree"), /is not a worktree task/],
    ["an id that is not a session's", { session_id: "bad", action: "info" }, /`session_id` must be an opencode id starting with "ses_", got "bad"/],
  ])("refuses %s", async (_name, args, message) => {
    expectCleanError(await (await none.mcp()).call(TOOL, args), message);
  });
});

type Result = Record<string, any>;
const resultOf = (r: { data: Record<string, unknown> }) => r.data.result as Result;

describeRecordedCalls(TOOL, [
  {
    scenario: "session-actions",
    call: 0,
    answer: "ok",
    check: (r) => {
      expect(r.data).toMatchObject({ session_id: "ses_0001", action: "info" });
      expect(resultOf(r)).toMatchObject({ id: "ses_0001", title: "worked on", directory: "/project", status: "idle", model: "fake/scripted", agent: "build" });
    },
  },
  {
    scenario: "session-actions",
    call: 1,
    answer: "ok",
    check: (r, { fixture }) => {
      const recorded = recordedMessages(fixture, "ses_0001");
      const shown = resultOf(r).messages as Result[];
      // The messages of the first turn, as opencode recorded them (later actions add more).
      expect(shown.slice(0, 2).map((m) => [m.id, m.role])).toEqual(recorded.slice(0, 2).map((m) => [m.info.id, m.info.role]));
      expect(shown[0]!.text).toBe("first task");
      expect(shown[1]!.text).toBe("First answer.");
    },
  },
  { scenario: "session-actions", call: 2, answer: "ok", check: (r) => expect(resultOf(r)).toMatchObject({ sessionId: "ses_0001", files: [] }) },
  { scenario: "session-actions", call: 3, answer: "ok", check: (r) => expect(resultOf(r)).toEqual([]) },
  {
    scenario: "session-actions",
    call: 4,
    answer: "ok",
    check: (r) => {
      expect(resultOf(r).session).toMatchObject({ id: "ses_0001" });
      expect(resultOf(r).messages.length).toBeGreaterThanOrEqual(2);
    },
  },
  {
    scenario: "session-actions",
    call: 5,
    answer: "ok",
    check: (r, { fixture }) => {
      expect(resultOf(r)).toMatchObject({ id: "ses_0001", title: "renamed" });
      expect(fixture.interactions.find((i) => i.operationId === "session.update" && JSON.stringify(i.requestBody).includes("renamed"))).toBeDefined();
    },
  },
  // set_model and set_agent change this server's defaults for the session's next turns, not opencode.
  { scenario: "session-actions", call: 6, answer: "ok", check: (r) => expect(resultOf(r)).toMatchObject({ sessionId: "ses_0001", model: "fake/backup" }) },
  { scenario: "session-actions", call: 7, answer: "ok", check: (r) => expect(resultOf(r)).toMatchObject({ sessionId: "ses_0001", agent: "plan" }) },
  {
    scenario: "session-actions",
    call: 8,
    answer: "ok",
    check: (r) => {
      expect(resultOf(r).id).not.toBe("ses_0001");
      expect(resultOf(r).title).toBe("renamed (fork #1)");
    },
  },
  {
    scenario: "session-actions",
    call: 9,
    answer: "ok",
    check: (r) => {
      expect(resultOf(r)).toEqual({ sessionId: "ses_0001", wasRunning: false });
      expect(r.text).toContain("(changes the session)");
    },
  },
  { scenario: "session-actions", call: 10, answer: "ok", check: (r) => expect(resultOf(r)).toMatchObject({ sessionId: "ses_0001", output: "shell-out" }) },
  {
    scenario: "session-actions",
    call: 11,
    answer: "ok",
    check: (r, { fixture }) => {
      expect(resultOf(r).revert).toMatchObject({ messageId: "msg_0001" });
      expect(fixture.interactions.some((i) => i.operationId === "session.revert" && JSON.stringify(i.requestBody).includes("msg_0001"))).toBe(true);
    },
  },
  {
    scenario: "session-actions",
    call: 12,
    answer: "ok",
    check: (r) => {
      expect(resultOf(r)).toMatchObject({ id: "ses_0001" });
      expect(resultOf(r).revert).toBeUndefined();
    },
  },
  {
    scenario: "session-actions",
    call: 13,
    answer: "ok",
    check: (r, { fixture }) => {
      expect(resultOf(r)).toEqual({ sessionId: "ses_0001", model: "fake/scripted", compacted: true });
      expect(fixture.interactions.some((i) => i.operationId === "session.summarize")).toBe(true);
    },
  },
  { scenario: "session-actions", call: 14, answer: "ok", check: (r) => expect(resultOf(r).archived).toBeTruthy() },
  {
    scenario: "session-actions",
    call: 16,
    answer: "ok",
    check: (r, { fixture }) => {
      expect(resultOf(r)).toMatchObject({ sessionId: "ses_0001", deleted: true });
      // Gone from opencode: the closing read found no such session.
      const read = fixture.interactions.findLast((i) => i.operationId === "session.get" && i.path === "/session/ses_0001")!;
      expect(read.status).toBe(404);
    },
  },
  { scenario: "missing-session", call: 4, answer: "tool error", check: (r) => expect(r.text).toContain("Session not found") },
]);

describe(`${TOOL} set_model on the recorded catalog`, () => {
  const replay = useToolReplay("session-actions");
  it("refuses a model the server does not have, naming the ones it has", async () => {
    const m = await replay.mcp();
    const r = await m.call(TOOL, { session_id: "ses_0001", action: "set_model", model: "fake/nope" });
    expectCleanError(r, /Provider "fake" has no model "nope"\. Its models: fake\/backup, fake\/scripted|fake\/scripted, fake\/backup/);
  });
});
