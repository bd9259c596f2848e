// oc_answer: schema, the input errors it refuses before any request (a permission needs a
// decision, a question answers or a reject), and its answers on recorded calls: a permission
// allowed once, a question answered, and a request opencode does not have.
import { describe, expect, it } from "vitest";
import { describeRecordedCalls, expectCleanError, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, inputProperties, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_answer";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("needs a request id; decision once, always or reject; answers are lists of labels", async () => {
    const tool = await listedTool(TOOL);
    const props = inputProperties(tool);
    expect(tool.inputSchema.required).toEqual(["request_id"]);
    expect(props.decision!.enum).toEqual(["once", "always", "reject"]);
    expect(props.answers).toMatchObject({ type: "array", items: { type: "array", items: { type: "string" } } });
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
  });
});

describe(`${TOOL} input errors (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it.each([
    ["an empty request id", { request_id: "" }, /request_id: Too small: expected string to have >=1 characters/],
    ["a permission without a decision", { request_id: "per_1" }, /A permission request needs `decision`: "once", "always" or "reject"/],
    ["a question without answers", { request_id: "que_1" }, /A question needs `answers` \(e\.g\. \[\["Blue"\]\]\) or `decision: "reject"`/],
    ["an unknown decision", { request_id: "per_1", decision: "yes" }, /decision: Invalid option: expected one of "once"\|"always"\|"reject"/],
  ])("refuses %s", async (_name, args, message) => {
    expectCleanError(await (await none.mcp()).call(TOOL, args), message);
  });
});

describeRecordedCalls(TOOL, [
  {
    scenario: "delegate-blocked-permission",
    call: 2,
    answer: "ok",
    check: (r, { fixture }) => {
      expect(r.data).toMatchObject({ answered: true, reply: "once" });
      expect(r.text).toContain("Call oc_wait");
      // The reply opencode got: the asked request, allowed once.
      const reply = fixture.interactions.find((i) => i.operationId === "permission.reply")!;
      expect(reply.path).toBe(`/permission/${r.data.request_id}/reply`);
      expect(reply.requestBody).toMatchObject({ reply: "once" });
    },
  },
  {
    scenario: "delegate-blocked-question",
    call: 1,
    answer: "ok",
    check: (r, { fixture }) => {
      expect(r.data).toMatchObject({ answered: true, reply: '[["Blue"]]' });
      const reply = fixture.interactions.find((i) => i.operationId === "question.reply")!;
      expect(reply.requestBody).toMatchObject({ answers: [["Blue"]] });
    },
  },
  {
    scenario: "missing-session",
    call: 5,
    answer: "tool error",
    check: (r) =>
      // oc_answer takes no session id: the next step is oc_pending, not the core's "pass its sessionId".
      expect(r.text).toMatch(
        /Permission request not found: per_\d+\. It may be answered already, or belong to a session in another project directory\. Next: oc_pending\.$/,
      ),
  },
]);
