// oc_catalog: schema, input errors, and recorded catalogs (agents, commands), as opencode listed them.
import { describe, expect, it } from "vitest";
import { describeRecordedCalls, expectCleanError, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, inputProperties, listedTool } from "../../support/toolsnaps.js";

const TOOL = "oc_catalog";
const KINDS = ["agents", "skills", "commands", "mcp", "providers", "config", "projects", "worktrees", "lsp", "formatters", "tools"];

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("needs a kind among the documented ones; read-only", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required).toEqual(["kind"]);
    expect(inputProperties(tool).kind!.enum).toEqual(KINDS);
    expect(tool.annotations?.readOnlyHint).toBe(true);
  });
});

describe(`${TOOL} input errors (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it("refuses an unknown kind", async () => {
    expectCleanError(await (await none.mcp()).call(TOOL, { kind: "nope" }), /Invalid option: expected one of "agents"\|"skills"/);
  });
});

const names = (r: { data: Record<string, unknown> }) => (r.data.items as Array<{ name: string }>).map((i) => i.name);
const recordedNames = (fixture: { interactions: Array<{ operationId?: string; body?: unknown }> }, op: string) =>
  (fixture.interactions.find((i) => i.operationId === op)!.body as Array<{ name: string }>).map((i) => i.name);

describeRecordedCalls(TOOL, [
  {
    scenario: "server-reads",
    call: 2,
    answer: "ok",
    check: (r, { fixture }) => {
      expect(r.data.kind).toBe("agents");
      expect(names(r)).toEqual(recordedNames(fixture, "app.agents"));
      expect(names(r)).toContain("build");
    },
  },
  {
    scenario: "server-reads",
    call: 3,
    answer: "ok",
    check: (r, { fixture }) => {
      expect(names(r)).toEqual(recordedNames(fixture, "command.list"));
      expect(r.text).toMatch(/^3 commands:/);
    },
  },
]);
