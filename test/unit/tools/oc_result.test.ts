// oc_result: schema, input errors, and its answers on recorded calls: the state now (idle after a
// done or an interrupted turn), and a session opencode does not have.
import { describe, expect, it } from "vitest";
import { describeRecordedCalls, expectCleanError, recordedLastReply, useNoOpencode } from "../../support/tool-replay.js";
import { ocResult } from "../../../src/mcp/tools/oc_result.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_result";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("needs a session id; read-only; its state is idle, busy, retry or unreachable", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required).toEqual(["session_id"]);
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    // tools/list names the output fields without their enums (the schema budget); answers are checked against the full one.
    expect(Object.keys(tool.outputSchema!.properties!)).toContain("state");
    expect(ocResult.output!.state!.options).toEqual(["idle", "busy", "retry", "unreachable"]);
  });
});

describe(`${TOOL} input errors (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it.each([
    ["no session id", {}, /Invalid arguments for tool oc_result: session_id: /],
    ["an id that is not a session's", { session_id: "x" }, /`session_id` must be an opencode id starting with "ses_", got "x"/],
  ])("refuses %s", async (_name, args, message) => {
    expectCleanError(await (await none.mcp()).call(TOOL, args), message);
  });
});

describeRecordedCalls(TOOL, [
  {
    scenario: "delegate-done",
    call: 1,
    answer: "done",
    check: (r, { fixture }) => {
      expect(r.data.state).toBe("idle");
      expect(r.text).toMatch(/^Session is idle\.\nDONE/);
      expect(r.data.answer).toBe(recordedLastReply(fixture, r.data.session_id as string)!.parts.findLast((p) => p.type === "text")!.text);
    },
  },
  {
    scenario: "delegate-running-interrupt",
    call: 3,
    answer: "interrupted",
    check: (r, { fixture }) => {
      expect(r.data.state).toBe("idle");
      const reply = recordedLastReply(fixture, r.data.session_id as string)!;
      expect(reply.info.error.name).toBe("MessageAbortedError");
      expect(r.data.error).toMatchObject({ name: "MessageAbortedError" });
    },
  },
  { scenario: "missing-session", call: 1, answer: "tool error", check: (r) => expect(r.text).toContain("Session not found") },
]);
