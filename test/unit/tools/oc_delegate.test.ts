// oc_delegate: its schema (snapshot and expectations), the input errors it refuses before any
// request, and its answers on recorded opencode traffic (test/fixtures/1.18.33/tools/delegate-*.json,
// `npm run record -- --tools`): one row per status, each compared with what opencode recorded.
// A template for a new tool's test: copy this file, keep the three parts.
import { describe, expect, it } from "vitest";
import {
  describeRecordedCalls,
  expectCleanError,
  recordedEvents,
  recordedLastReply,
  recordedMessages,
  useNoOpencode,
  useToolReplay,
} from "../../support/tool-replay.js";
import { expectToolsnap, inputProperties, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_delegate";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("needs only a task; enums and annotations as documented", async () => {
    const tool = await listedTool(TOOL);
    const props = inputProperties(tool);
    expect(tool.inputSchema.required).toEqual(["task"]);
    expect(props.permissions!.enum).toEqual(["auto", "readonly", "agent"]);
    expect(props.approvals!.enum).toEqual(["elicit", "return", "deny"]);
    expect(props.detail!.enum).toEqual(["final", "summary", "full"]);
    expect(props.isolation!.enum).toEqual(["shared", "instance", "worktree"]);
    expect(props.setup!.type).toBe("string");
    expect(props.base!.type).toBe("string");
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true });
    expect(Object.keys(tool.outputSchema!.properties!)).toEqual(["session_id", "status"]);
  });
});

describe(`${TOOL} input errors (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it.each([
    ["no task", {}, /Invalid arguments for tool oc_delegate: task: /],
    ["an argument it does not take", { task: "x", bogus: 1 }, /oc_delegate does not take `bogus`\. Its arguments: task, /],
    ["a session id that is not one", { task: "x", session_id: "nope" }, /`session_id` must be an opencode id starting with "ses_", got "nope"/],
    ["an unknown permissions preset", { task: "x", permissions: "all" }, /permissions: Invalid option: expected one of "auto"\|"readonly"\|"agent"/],
    ["a bad rule", { task: "x", rules: { bash: "maybe" } }, /Permission rule "bash" is "maybe": use "allow", "deny", "ask"/],
    ["isolation instance on a server without instances", { task: "x", isolation: "instance" }, /isolation "instance" needs private instances/],
    ["isolation worktree on a server without instances", { task: "x", isolation: "worktree" }, /isolation "worktree" needs private instances/],
    [
      "isolation worktree for a continued session",
      { task: "x", isolation: "worktree", session_id: "ses_continued" },
      /isolation "worktree" starts a new session in a new worktree: leave out session_id/,
    ],
    [
      "a task longer than one prompt takes",
      { task: "x".repeat(1_000_001) },
      /`task` is 1,000,001 characters; one prompt takes at most 1,000,000 .* \(or attach it with `files`\)\.$/,
    ],
  ])("refuses %s", async (_name, args, message) => {
    expectCleanError(await (await none.mcp()).call(TOOL, args), message);
  });
});

describeRecordedCalls(TOOL, [
  {
    call: 0,
    scenario: "delegate-done",
    answer: "done",
    check(r, { fixture }) {
      const reply = recordedLastReply(fixture, r.data.session_id as string)!;
      expect(reply.info.time.completed).toBeDefined();
      expect(reply.info.error).toBeUndefined();
      expect(r.data.answer).toBe(reply.parts.findLast((p) => p.type === "text")!.text);
      expect(r.data.files).toEqual([expect.objectContaining({ path: "hello.txt" })]);
      expect(r.data.tools).toEqual([expect.objectContaining({ tool: "write", status: "completed" })]);
      // Tokens of the turn: every assistant message of it (the tool step and the answer).
      const replies = recordedMessages(fixture, r.data.session_id as string).filter((m) => m.info.role === "assistant");
      expect(r.data.tokens).toMatchObject({ total: replies.reduce((n, m) => n + m.info.tokens.total, 0) });
      expect(r.text).toMatch(/^DONE · session ses_0001/);
    },
  },
  {
    call: 0,
    scenario: "delegate-error",
    answer: "error",
    check(r, { fixture }) {
      const reply = recordedLastReply(fixture, r.data.session_id as string)!;
      expect(r.data.error).toMatchObject({ name: reply.info.error.name });
      expect(r.text).toContain(`Error: ${reply.info.error.name}`);
    },
  },
  {
    call: 0,
    scenario: "delegate-blocked-permission",
    answer: "blocked",
    check(r, { fixture }) {
      const asked = recordedEvents(fixture, "permission.asked")[0]!.properties;
      expect(r.data.pending).toEqual([expect.objectContaining({ kind: "permission", id: asked.id, permission: "bash", patterns: asked.patterns })]);
      expect(r.text).toContain(`oc_answer {"request_id":"${asked.id}","decision":"once"}`);
      expect(r.data.next).toMatch(/oc_answer.*oc_wait/);
    },
  },
  {
    call: 0,
    scenario: "delegate-blocked-question",
    answer: "blocked",
    check(r, { fixture }) {
      const asked = recordedEvents(fixture, "question.asked")[0]!.properties;
      expect(r.data.pending).toEqual([expect.objectContaining({ kind: "question", id: asked.id, questions: asked.questions })]);
      expect(r.text).toContain("question: Which color? [Red | Blue]");
    },
  },
  {
    call: 0,
    scenario: "delegate-running-interrupt",
    answer: "running",
    check(r) {
      expect(r.data.next).toContain(`oc_wait {"session_id":"${r.data.session_id}"}`);
    },
  },
  {
    call: 0,
    scenario: "delegate-budget",
    answer: "budget_exceeded",
    check(r) {
      expect(r.data.budget).toMatchObject({ exceeded: true, max_tokens: 50 });
      expect((r.data.budget as { tokens: number }).tokens).toBeGreaterThan(50);
    },
  },
  {
    call: 0,
    scenario: "delegate-fallback",
    answer: "done",
    check(r, { fixture }) {
      const reply = recordedLastReply(fixture, r.data.session_id as string)!;
      expect(reply.info.modelID).toBe("backup");
      expect(r.data.fallbacks).toEqual([expect.objectContaining({ from: "fake/scripted", to: "fake/backup" })]);
      expect(r.data.answer).toBe("Answered by the backup.");
    },
  },
]);

describe(`${TOOL} with a request_id`, () => {
  const replay = useToolReplay("delegate-request-id");
  it("starts once: the repeated call answers with the first call's session, marked replayed", async () => {
    const [first, again] = await replay.replay();
    expect(first!.data).toMatchObject({ status: "done", answer: "Once." });
    expect(first!.data.replayed).toBeUndefined();
    expect(again!.data).toMatchObject({ session_id: first!.data.session_id, status: "done", replayed: true });
    expect(again!.text).toMatch(/^REPLAYED request_id job-1/);
    // One prompt reached opencode.
    expect(replay.fixture.interactions.filter((i) => i.operationId === "session.prompt_async")).toHaveLength(1);
  });
});
