// oc_instances: schema, its recorded calls on a shared server with no private instance
// (test/fixtures/1.18.33/tools/instances.json: opencode hears nothing of them, so the replay fails
// on any request), and its handler there (its registry lives in the test's temp state dir): list
// says none, stop needs a target and names what it did not find. Listing and stopping real
// instances is the e2e test test/e2e/mcp/isolation.test.ts.
import { describe, expect, it } from "vitest";
import { callWindow } from "../../support/recorded-outcome.js";
import { describeRecordedCalls, expectCleanError, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, inputProperties, listedTool } from "../../support/toolsnaps.js";

const TOOL = "oc_instances";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("needs an action, list or stop", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required).toEqual(["action"]);
    expect(inputProperties(tool).action!.enum).toEqual(["list", "stop"]);
    expect(inputProperties(tool).pid).toMatchObject({ type: "integer", exclusiveMinimum: 0 });
  });
});

describeRecordedCalls(TOOL, [
  {
    scenario: "instances",
    call: 0,
    answer: "ok",
    check: (r, { fixture }) => {
      const { from, to } = callWindow(fixture, 0);
      expect(fixture.interactions.filter((i) => i.atMs >= from && i.atMs < to)).toEqual([]);
      expect(r.data).toEqual({ instances: [] });
      expect(r.text).toBe("No private instances are running.");
    },
  },
  {
    scenario: "instances",
    call: 1,
    answer: "ok",
    check: (r) => expect(r.text).toBe('No instance for "4242". Call oc_instances with action "list".'),
  },
]);

describe(`${TOOL} without instances (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it("lists none", async () => {
    const r = await (await none.mcp()).call(TOOL, { action: "list" });
    expect(r.isError).toBe(false);
    expect(r.data).toEqual({ instances: [] });
    expect(r.text).toBe("No private instances are running.");
  });

  it.each([
    ["stop without a target", { action: "stop" }, /action "stop" needs `directory` or `pid` \(see action "list"\)/],
    ["a pid that is not a positive integer", { action: "stop", pid: -1 }, /pid: /],
    ["a directory longer than any path", { action: "stop", directory: "d".repeat(4_097) }, /`directory` is 4,097 characters, longer than any path \(4,096\)/],
  ])("refuses %s", async (_name, args, message) => {
    expectCleanError(await (await none.mcp()).call(TOOL, args), message);
  });

  it("says when there is no instance to stop", async () => {
    const r = await (await none.mcp()).call(TOOL, { action: "stop", pid: 4242 });
    expect(r.data).toEqual({ instances: [] });
    expect(r.text).toBe('No instance for "4242". Call oc_instances with action "list".');
  });
});
