// oc_audit: schema, its answers on a recorded task (test/fixtures/1.18.33/tools/audit.json: the
// line's session, outcome, model and tokens are what opencode recorded of the turn), and its
// handler on the server's own trail (a temp state dir): calls that change something are recorded,
// read back with filters; auditing off says so.
import { describe, expect, it } from "vitest";
import { recordedCallOutcome, sessionAsTold } from "../../support/recorded-outcome.js";
import { describeRecordedCalls, expectCleanError, useNoOpencode, type ToolReplay } from "../../support/tool-replay.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";

const TOOL = "oc_audit";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("takes only optional filters; read-only", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required ?? []).toEqual([]);
    expect(Object.keys(tool.inputSchema.properties!)).toEqual(["session_id", "tool", "since", "until", "limit", "before"]);
    expect(tool.annotations?.readOnlyHint).toBe(true);
  });
});

/** The audit line of the recorded task, as opencode's record of its turn fixes it. */
function expectTaskLine(entries: Array<Record<string, unknown>>, { fixture }: ToolReplay): void {
  const task = recordedCallOutcome(fixture, 0);
  const [sessionId, outcome] = Object.entries(task.sessions)[0]!;
  const reply = sessionAsTold(fixture, sessionId, Infinity).messages.findLast((m) => m.info.role === "assistant")!;
  expect(entries).toEqual([
    expect.objectContaining({
      tool: "oc_delegate",
      session_id: sessionId,
      outcome: outcome.status,
      tokens: outcome.tokens,
      model: `${reply.info.providerID}/${reply.info.modelID}`,
    }),
  ]);
}

describeRecordedCalls(TOOL, [
  { scenario: "audit", call: 1, answer: "ok", check: (r, replay) => expectTaskLine(r.data.entries as Array<Record<string, unknown>>, replay) },
  { scenario: "audit", call: 2, answer: "ok", check: (r, replay) => expectTaskLine(r.data.entries as Array<Record<string, unknown>>, replay) },
  {
    scenario: "audit",
    call: 3,
    answer: "ok",
    check: (r, replay) => {
      expectTaskLine(r.data.entries as Array<Record<string, unknown>>, replay);
      expect(r.text).toMatch(/ oc_delegate +done +ses_0001 +model=fake\/scripted +tokens=\d+ /);
    },
  },
]);

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

  it("reads a page at a time from the newest back: `next` goes on with older entries", async () => {
    const m = await none.mcp();
    for (const task of ["first", "second", "third"]) await m.call("oc_delegate", { task, bogus: 1 });
    const newest = await m.call(TOOL, { limit: 2 });
    expect((newest.data.entries as Array<{ prompt: { first_line: string } }>).map((e) => e.prompt.first_line)).toEqual(["second", "third"]);
    expect(newest.data.next).toEqual(expect.any(String));
    expect(newest.text).toContain(`Older entries may match: oc_audit {"limit":2,"before":"${newest.data.next}"}`);
    const older = await m.call(TOOL, { limit: 2, before: newest.data.next });
    expect((older.data.entries as Array<{ prompt: { first_line: string } }>).map((e) => e.prompt.first_line)).toEqual(["first"]);
    expect(older.data.next).toBeUndefined();
    expectCleanError(await m.call(TOOL, { before: "nonsense" }), 'Invalid input to oc_audit: `before` "nonsense" is not a cursor');
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

  it("refuses a session_id that is not one", async () => {
    expectCleanError(
      await (await none.mcp()).call(TOOL, { session_id: "my session" }),
      /`session_id` must be an opencode id starting with "ses_", got "my session"/,
    );
  });

  it("says when auditing is off", async () => {
    const m = await none.mcp({ env: { OPENCODE_CONDUCTOR_AUDIT: "off" } });
    const r = await m.call(TOOL, {});
    expect(r.data).toEqual({ entries: [] });
    expect(r.text).toBe("Auditing is off (OPENCODE_CONDUCTOR_AUDIT=off).");
  });
});
