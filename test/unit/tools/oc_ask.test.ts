// oc_ask: schema, input errors, and a recorded quick question (done, with the answer opencode
// streamed, and the session it made deleted afterwards).
import { describe, expect, it } from "vitest";
import { describeRecordedCalls, expectCleanError, recordedEvents, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_ask";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("needs a question; read-only", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required).toEqual(["question"]);
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: true });
  });
});

describe(`${TOOL} input errors (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it.each([
    ["no question", {}, /Invalid arguments for tool oc_ask: question: /],
    // The core names the field `task` (it is oc_delegate's): the message still says what to do.
    ["an empty question", { question: "" }, /`question` is empty: ask something about the project/],
    [
      "a question longer than one prompt takes",
      { question: "x".repeat(1_000_001) },
      /`question` is 1,000,001 characters; one prompt takes at most 1,000,000 .* \(or attach it with `files`\)\.$/,
    ],
  ])("refuses %s", async (_name, args, message) => {
    expectCleanError(await (await none.mcp()).call(TOOL, args), message);
  });
});

describeRecordedCalls(TOOL, [
  {
    scenario: "ask-and-parallel",
    call: 0,
    answer: "done",
    check: (r, { fixture }) => {
      // The answer is the text part opencode streamed for the session oc_ask made, which it then deleted.
      const id = (fixture.interactions.find((i) => i.operationId === "session.create")!.body as { id: string }).id;
      const texts = recordedEvents(fixture, "message.part.updated").filter((e) => e.properties.part.sessionID === id && e.properties.part.type === "text");
      expect(r.data.answer).toBe(texts.at(-1)!.properties.part.text);
      expect(r.text).toBe("It is a test project.");
      expect(fixture.interactions.some((i) => i.operationId === "session.delete" && i.path === `/session/${id}`)).toBe(true);
    },
  },
]);
