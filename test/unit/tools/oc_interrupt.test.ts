// oc_interrupt: schema, input errors, and its answers on recorded calls: a running turn stopped
// (interrupted, as opencode recorded the aborted reply) and a session opencode does not have.
import { describe, expect, it } from "vitest";
import { describeRecordedCalls, expectCleanError, recordedLastReply, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_interrupt";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("needs a session id; changes the session", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required).toEqual(["session_id"]);
    expect(clientHints(tool.annotations).readOnlyHint).toBe(false);
  });
});

describe(`${TOOL} input errors (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it("refuses an id that is not a session's", async () => {
    expectCleanError(await (await none.mcp()).call(TOOL, { session_id: "bad" }), /`session_id` must be an opencode id starting with "ses_", got "bad"/);
  });
});

describeRecordedCalls(TOOL, [
  {
    scenario: "delegate-running-interrupt",
    call: 2,
    answer: "interrupted",
    check: (r, { fixture }) => {
      expect(r.text).toMatch(/^Interrupted\./);
      expect(recordedLastReply(fixture, r.data.session_id as string)!.info.error.name).toBe("MessageAbortedError");
      expect(fixture.interactions.some((i) => i.operationId === "session.abort")).toBe(true);
    },
  },
  { scenario: "missing-session", call: 3, answer: "tool error", check: (r) => expect(r.text).toContain("Session not found") },
]);
