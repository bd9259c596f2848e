// oc_sessions: schema, input errors, and a recorded list (newest first, as opencode listed them).
import { describe, expect, it } from "vitest";
import { describeRecordedCalls, expectCleanError, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_sessions";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("takes only optional filters; read-only", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required ?? []).toEqual([]);
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: true });
  });
});

describe(`${TOOL} input errors (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it("refuses a parent id that is not a session's", async () => {
    expectCleanError(await (await none.mcp()).call(TOOL, { parent_id: "bad" }), /`parent_id` must be an opencode id starting with "ses_", got "bad"/);
  });
});

describeRecordedCalls(TOOL, [
  {
    scenario: "session-actions",
    call: 15,
    answer: "ok",
    check: (r, { fixture }) => {
      const sessions = r.data.sessions as Array<{ id: string; title: string }>;
      const listed = fixture.interactions.findLast((i) => i.operationId === "session.list")!.body as Array<{ id: string; title: string }>;
      expect(sessions.map((s) => [s.id, s.title])).toEqual(listed.map((s) => [s.id, s.title]));
      // Newest first: the session the scenario went on changing, then its fork.
      expect(sessions.map((s) => s.title)).toEqual(["renamed", "renamed (fork #1)"]);
      expect(r.text.split("\n")[0]).toMatch(/^ses_0001 .* renamed /);
    },
  },
]);
