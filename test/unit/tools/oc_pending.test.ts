// oc_pending: schema, input errors, and the list on a recorded blocked turn (each request with
// the exact oc_answer call), compared with the permission opencode recorded as asked.
import { describe, expect, it } from "vitest";
import { describeRecordedCalls, expectCleanError, recordedEvents, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_pending";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("takes an optional session id; read-only", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required ?? []).toEqual([]);
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: true });
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
    scenario: "delegate-blocked-permission",
    call: 1,
    answer: "ok",
    check: (r, { fixture }) => {
      const asked = recordedEvents(fixture, "permission.asked")[0]!.properties;
      const listed = r.data.requests as Array<Record<string, unknown>>;
      expect(listed).toEqual([expect.objectContaining({ id: asked.id, session_id: asked.sessionID, kind: "permission" })]);
      expect(r.text).toContain(`oc_answer {"request_id":"${asked.id}","decision":"once"}`);
    },
  },
]);
