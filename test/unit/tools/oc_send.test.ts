// oc_send: schema, input errors, and its answers on recorded calls: a queued message and a steer
// (both answer at once with "running"; oc_wait picks up), and a session opencode does not have.
import { describe, expect, it } from "vitest";
import { MISSING_SESSION } from "../../support/recording/scenarios.js";
import { describeRecordedCalls, expectCleanError, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, inputProperties, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_send";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("needs a session and a message; delivery is queue or steer", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required).toEqual(["session_id", "message"]);
    expect(inputProperties(tool).delivery!.enum).toEqual(["queue", "steer"]);
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
  });
});

describe(`${TOOL} input errors (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it.each([
    ["no message", { session_id: MISSING_SESSION }, /Invalid arguments for tool oc_send: message: /],
    ["an unknown delivery", { session_id: MISSING_SESSION, message: "hi", delivery: "now" }, /delivery: Invalid option: expected one of "queue"\|"steer"/],
    ["an id that is not a session's", { session_id: "ses", message: "hi" }, /`session_id` must be an opencode id starting with "ses_", got "ses"/],
    [
      "a message longer than one prompt takes",
      { session_id: MISSING_SESSION, message: "x".repeat(1_000_001) },
      /`message` is 1,000,001 characters; one prompt takes at most 1,000,000 \(more than most models can read at once\)\. Put the long content in a file in the project and name the file in the message\.$/,
    ],
  ])("refuses %s", async (_name, args, message) => {
    expectCleanError(await (await none.mcp()).call(TOOL, args), message);
  });
});

describeRecordedCalls(TOOL, [
  {
    scenario: "send-queue",
    call: 0,
    answer: "running",
    check: (r, { fixture }) => {
      expect(r.data.delivery).toBe("queue");
      expect(r.text).toMatch(/^Sent \(queue\)\./);
      expect(r.data.next).toContain("oc_wait");
      // The message reached opencode as a prompt of that session.
      const prompt = fixture.interactions.find((i) => i.operationId === "session.prompt_async")!;
      expect(prompt.path).toBe(`/session/${r.data.session_id}/prompt_async`);
      expect(JSON.stringify(prompt.requestBody)).toContain("second task");
    },
  },
  {
    scenario: "send-steer",
    call: 1,
    answer: "running",
    check: (r, { fixture }) => {
      expect(r.data.delivery).toBe("steer");
      // Steering stops the running turn first, then prompts.
      const ops = fixture.interactions.map((i) => i.operationId);
      expect(ops.indexOf("session.abort")).toBeGreaterThan(ops.indexOf("session.prompt_async"));
      expect(ops.lastIndexOf("session.prompt_async")).toBeGreaterThan(ops.indexOf("session.abort"));
    },
  },
  { scenario: "missing-session", call: 2, answer: "tool error", check: (r) => expect(r.text).toContain("Session not found") },
]);
