// oc_models: schema and recorded model lists (all, and a search), as opencode's provider
// config listed them.
import { describe, expect, it } from "vitest";
import { describeRecordedCalls, expectCleanError, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";

const TOOL = "oc_models";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("takes only optional filters; read-only", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required ?? []).toEqual([]);
    expect(Object.keys(tool.inputSchema.properties!)).toEqual(["search", "provider", "free_only", "limit", "directory"]);
    expect(tool.annotations?.readOnlyHint).toBe(true);
  });
});

describe(`${TOOL} input errors (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it("refuses a search longer than any model name", async () => {
    expectCleanError(await (await none.mcp()).call(TOOL, { search: "s".repeat(201) }), /`search` is 201 characters; at most 200 are accepted/);
  });
});

const ids = (r: { data: Record<string, unknown> }) => (r.data.models as Array<{ id: string }>).map((m) => m.id);

describeRecordedCalls(TOOL, [
  {
    scenario: "server-reads",
    call: 0,
    answer: "ok",
    check: (r, { fixture }) => {
      const providers = (
        fixture.interactions.find((i) => i.operationId === "config.providers")!.body as { providers: Array<{ id: string; models: Record<string, unknown> }> }
      ).providers;
      const recorded = providers.flatMap((p) => Object.keys(p.models).map((m) => `${p.id}/${m}`)).sort();
      expect(ids(r).sort()).toEqual(recorded);
      expect(r.data.total).toBe(recorded.length);
    },
  },
  { scenario: "server-reads", call: 1, answer: "ok", check: (r) => expect(ids(r)).toEqual(["fake/backup"]) },
]);
