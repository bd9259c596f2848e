// oc_delegate_parallel: schema, input errors (no tasks, a key a task does not take), and a
// recorded batch of two tasks, each done with the answer opencode recorded for its session.
import { describe, expect, it } from "vitest";
import { describeRecordedCalls, expectCleanError, recordedLastReply, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, inputProperties, listedTool } from "../../support/toolsnaps.js";

const TOOL = "oc_delegate_parallel";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("needs 1 to 50 tasks, each with a task and no key it does not take", async () => {
    const tool = await listedTool(TOOL);
    const tasks = inputProperties(tool).tasks!;
    expect(tool.inputSchema.required).toEqual(["tasks"]);
    expect(tasks).toMatchObject({ type: "array", minItems: 1, maxItems: 50 });
    expect(tasks.items).toMatchObject({ required: ["task"], additionalProperties: false });
  });
});

describe(`${TOOL} input errors (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it.each([
    ["no tasks", { tasks: [] }, /tasks: Too small: expected array to have >=1 items/],
    ["a per-task key it does not take", { tasks: [{ task: "a", checks: ["npm test"] }] }, /tasks\.0: Unrecognized key: "checks"/],
    ["a task without its task", { tasks: [{ title: "a" }] }, /tasks\.0\.task: /],
    [
      "a task longer than one prompt takes",
      { tasks: [{ task: "a" }, { task: "x".repeat(1_000_001) }] },
      /`task` is 1,000,001 characters; one prompt takes at most 1,000,000/,
    ],
  ])("refuses %s", async (_name, args, message) => {
    expectCleanError(await (await none.mcp()).call(TOOL, args), message);
  });
});

describeRecordedCalls(TOOL, [
  {
    scenario: "ask-and-parallel",
    call: 1,
    answer: "ok",
    check: (r, { fixture }) => {
      const results = r.data.results as Array<{ index: number; status: string; session_id: string; answer: string }>;
      expect(r.data.counts).toEqual({ done: 2 });
      expect(results.map((t) => [t.index, t.status])).toEqual([
        [0, "done"],
        [1, "done"],
      ]);
      for (const t of results) expect(t.answer).toBe(recordedLastReply(fixture, t.session_id)!.parts.findLast((p) => p.type === "text")!.text);
      expect(new Set(results.map((t) => t.answer))).toEqual(new Set(["Task A done.", "Task B done."]));
      expect(r.text).toMatch(/^2 tasks: 2 done/);
    },
  },
]);
