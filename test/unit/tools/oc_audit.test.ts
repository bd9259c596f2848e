// oc_audit: schema and its handler on the server's own trail (a temp state dir): calls that
// change something are recorded, read back newest first with filters; auditing off says so.
import { describe, expect, it } from "vitest";
import { expectCleanError, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";

const TOOL = "oc_audit";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("takes only optional filters; read-only", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required ?? []).toEqual([]);
    expect(Object.keys(tool.inputSchema.properties!)).toEqual(["session_id", "tool", "since", "until", "limit"]);
    expect(tool.annotations?.readOnlyHint).toBe(true);
  });
});

describe(`${TOOL} on the server's trail (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  it("reads back a refused call that would have changed something, with its error", async () => {
    const m = await none.mcp();
    await m.call("oc_delegate", { task: "x", bogus: 1 });
    const r = await m.call(TOOL, {});
    expect(r.isError).toBe(false);
    const entries = r.data.entries as Array<Record<string, unknown>>;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ tool: "oc_delegate", outcome: "error", client: { name: "memory-test-client" } });
    expect(r.text).toContain("does not take `bogus`");
    expect(r.data.path).toBe(`${m.stateDir}/audit.jsonl`);
  });

  it("filters by tool and by session", async () => {
    const m = await none.mcp();
    await m.call("oc_instances", { action: "list" });
    await m.call("oc_delegate", { task: "x", bogus: 1 });
    const delegates = (await m.call(TOOL, { tool: "oc_delegate" })).data.entries as Array<{ tool: string }>;
    expect(delegates.map((e) => e.tool)).toEqual(["oc_delegate"]);
    expect((await m.call(TOOL, { tool: "oc_instances" })).data.entries).toEqual([expect.objectContaining({ tool: "oc_instances" })]);
    expect((await m.call(TOOL, { session_id: "ses_0000000000000000000000000" })).data.entries).toEqual([]);
  });

  it("filters by time: an ISO time or an age", async () => {
    const m = await none.mcp();
    await m.call("oc_delegate", { task: "x", bogus: 1 });
    expect((await m.call(TOOL, { since: "1h" })).data.entries).toEqual([expect.objectContaining({ tool: "oc_delegate" })]);
    expect((await m.call(TOOL, { since: new Date(Date.now() + 3_600_000).toISOString() })).data.entries).toEqual([]);
    expect((await m.call(TOOL, { until: "2000-01-01" })).data.entries).toEqual([]);
  });

  it.each([
    ["since", "yesterday-ish"],
    ["until", "March 3"],
    ["since", "x".repeat(5_000)],
  ])("refuses a %s that is not a time, saying what is accepted", async (field, value) => {
    const m = await none.mcp();
    await m.call("oc_delegate", { task: "x", bogus: 1 });
    const r = await m.call(TOOL, { [field]: value });
    expectCleanError(r, `Invalid input to oc_audit: \`${field}\` ${JSON.stringify(value.slice(0, 200)).slice(0, -1)}`);
    expect(r.text).toMatch(/is not a time: give an ISO date or time \(2026-11-29, 2026-11-29T18:00:00Z\) or an age \(30m, 2h, 7d: that long ago\)\.$/);
    expect(r.text.length).toBeLessThan(400);
  });

  it("says when auditing is off", async () => {
    const m = await none.mcp({ env: { OPENCODE_CONDUCTOR_AUDIT: "off" } });
    const r = await m.call(TOOL, {});
    expect(r.data).toEqual({ entries: [] });
    expect(r.text).toBe("Auditing is off (OPENCODE_CONDUCTOR_AUDIT=off).");
  });
});
