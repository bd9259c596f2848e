// oc_wait: schema, input errors, and its answers on recorded calls: a turn that ends (done after
// a delegate, an answer, a queued or steered message), one still running at the timeout, and a
// session opencode does not have. Each status is compared with what opencode recorded.
import { describe, expect, it } from "vitest";
import { MISSING_SESSION } from "../../support/recording/scenarios.js";
import { describeRecordedCalls, expectCleanError, recordedLastReply, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, inputProperties, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_wait";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("needs a session id; read-only and idempotent", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required).toEqual(["session_id"]);
    expect(Object.keys(inputProperties(tool))).toEqual(["session_id", "timeout_s", "detail", "interrupt_on_cancel", "approvals"]);
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: true });
  });
});

describe(`${TOOL} input errors (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it.each([
    ["no session id", {}, /Invalid arguments for tool oc_wait: session_id: /],
    [
      "an id that is not a session's",
      { session_id: "nope" },
      /`session_id` must be an opencode id starting with "ses_", got "nope". List sessions to find one. Next: oc_sessions/,
    ],
    ["an unknown detail", { session_id: MISSING_SESSION, detail: "everything" }, /detail: Invalid option: expected one of "final"\|"summary"\|"full"/],
  ])("refuses %s", async (_name, args, message) => {
    expectCleanError(await (await none.mcp()).call(TOOL, args), message);
  });
});

/** The answer is the last reply opencode recorded, finished and without error. */
const doneAsRecorded = (r: { data: Record<string, unknown> }, fixture: Parameters<typeof recordedLastReply>[0]) => {
  const reply = recordedLastReply(fixture, r.data.session_id as string)!;
  expect(reply.info.time.completed).toBeDefined();
  expect(reply.info.error).toBeUndefined();
  expect(r.data.answer).toBe(reply.parts.findLast((p) => p.type === "text")!.text);
};

describeRecordedCalls(TOOL, [
  { scenario: "delegate-done", call: 2, answer: "done", check: (r, { fixture }) => doneAsRecorded(r, fixture) },
  {
    scenario: "delegate-blocked-permission",
    call: 3,
    answer: "done",
    check: (r, { fixture }) => {
      doneAsRecorded(r, fixture);
      expect(r.data.pending).toBeUndefined();
    },
  },
  { scenario: "delegate-blocked-question", call: 2, answer: "done", check: (r, { fixture }) => doneAsRecorded(r, fixture) },
  {
    scenario: "delegate-running-interrupt",
    call: 1,
    answer: "running",
    check: (r) => expect(r.data.next).toContain(`oc_wait {"session_id":"${r.data.session_id}"}`),
  },
  { scenario: "send-queue", call: 1, answer: "done", check: (r, { fixture }) => doneAsRecorded(r, fixture) },
  {
    scenario: "send-steer",
    call: 2,
    answer: "done",
    check: (r, { fixture }) => {
      doneAsRecorded(r, fixture);
      expect(r.data.answer).toBe("Steered answer.");
    },
  },
  {
    scenario: "missing-session",
    call: 0,
    answer: "tool error",
    check: (r) => expect(r.text).toMatch(/NotFoundError.*Session not found: ses_0{25}/),
  },
]);
