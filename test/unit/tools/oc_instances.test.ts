// oc_instances: schema and its handler on a server with no private instance (its registry lives
// in the test's temp state dir): list says none, stop needs a target and names what it did not find.
// Listing and stopping real instances is the e2e test test/e2e/mcp/isolation.test.ts.
import { describe, expect, it } from "vitest";
import { expectCleanError, useNoOpencode } from "../../support/tool-replay.js";
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
    ["a pid that is not a positive integer", { action: "stop", pid: -1 }, /at pid/],
  ])("refuses %s", async (_name, args, message) => {
    expectCleanError(await (await none.mcp()).call(TOOL, args), message);
  });

  it("says when there is no instance to stop", async () => {
    const r = await (await none.mcp()).call(TOOL, { action: "stop", pid: 4242 });
    expect(r.data).toEqual({ instances: [] });
    expect(r.text).toBe('No instance for "4242". Call oc_instances with action "list".');
  });
});
