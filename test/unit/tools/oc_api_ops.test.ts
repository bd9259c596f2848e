// oc_api_ops: schema and its handler, which reads only the operation table (the pinned spec for a
// server whose spec is the pinned one): lookups by words, the grouped index, one operation's full
// input by id or by METHOD /path, close ids for a typo, and WebSocket routes marked.
import { describe, expect, it } from "vitest";
import { expectCleanError, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";

const TOOL = "oc_api_ops";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("takes only optional fields; read-only", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required ?? []).toEqual([]);
    expect(Object.keys(tool.inputSchema.properties!)).toEqual(["search", "operation", "limit"]);
    expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
  });
});

describe(`${TOOL} handler (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  const call = async (args: Record<string, unknown>) => (await none.mcp()).call(TOOL, args);

  it("finds session.list by words", async () => {
    const { isError, text, data } = await call({ search: "session list" });
    const operations = data.operations as Array<{ id: string; summary: string }>;
    expect(isError).toBe(false);
    expect(operations[0]).toEqual({ id: "session.list", method: "GET", path: "/session", summary: "List sessions", access: "read" });
    expect(text).toMatch(/^session\.list\s+GET \/session\s+List sessions \[read\]$/m);
    for (const row of operations) expect(row.summary.length).toBeLessThanOrEqual(100);
  });

  it("lists a grouped index with no arguments, up to limit", async () => {
    const { text, data } = await call({ limit: 5 });
    expect(data.total).toBe(188);
    expect(data.operations).toHaveLength(5);
    expect(text).toContain("session (24)");
  });

  it("returns one operation's full input, by id or by METHOD /path", async () => {
    const { text, data } = await call({ operation: "session.prompt" });
    const op = data.operation as Record<string, any>;
    expect(op).toMatchObject({ id: "session.prompt", method: "POST", path: "/session/{sessionID}/message", access: "write", streaming: false });
    expect(op.body.required).toEqual(["parts"]);
    expect(op.body.$defs.TextPartInput).toBeDefined();
    expect(op.path_params.required).toEqual(["sessionID"]);
    expect(op.responses.map((r: { status: string }) => r.status)).toContain("200");
    expect(text).toContain("parts*: (TextPartInput | FilePartInput | AgentPartInput | SubtaskPartInput)[]");
    expect(((await call({ operation: "GET /session/{sessionID}/message" })).data.operation as { id: string }).id).toBe("session.messages");
  });

  it("marks WebSocket routes as not callable with oc_api", async () => {
    expect((await call({ operation: "pty.connect" })).text).toContain("[WebSocket: not callable with oc_api]");
  });

  it("suggests close ids for an unknown operation", async () => {
    const r = await call({ operation: "sesion.mesages" });
    expectCleanError(r, 'No opencode operation "sesion.mesages"');
    expect(r.text).toMatch(/Closest: session\.messages \(GET \/session\/\{sessionID\}\/message\)/);
  });
});
