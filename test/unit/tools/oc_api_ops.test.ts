// oc_api_ops: schema, its recorded calls (test/fixtures/1.18.33/tools/api-ops.json) compared with
// the recorded server's own document (its version is the pin's, whose `GET /doc` is vendored byte
// for byte in spec/openapi.json), and its handler, which reads only the operation table: lookups by
// words, the grouped index, one operation's full input by id or by METHOD /path, close ids for a
// typo, and WebSocket routes marked.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { listOperations, type OpenApiDocument } from "../../../src/openapi/spec.js";
import { specInfo } from "../../../generated/operations.js";
import { describeRecordedCalls, expectCleanError, useNoOpencode } from "../../support/tool-replay.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_api_ops";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("takes only optional fields; read-only", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required ?? []).toEqual([]);
    expect(Object.keys(tool.inputSchema.properties!)).toEqual(["search", "operation", "limit"]);
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: true });
  });
});

/** The recorded server's own document: the pin's `GET /doc`, when the recording's opencode is the pin. */
function serverDocument(version: string) {
  expect(version).toBe(specInfo.opencodeVersion);
  const doc = JSON.parse(readFileSync(new URL("../../../spec/openapi.json", import.meta.url), "utf8")) as OpenApiDocument;
  return { doc, operations: listOperations(doc) };
}

describeRecordedCalls(TOOL, [
  {
    scenario: "api-ops",
    call: 0,
    answer: "ok",
    check: (r, { fixture }) => {
      const { operations } = serverDocument(fixture.opencodeVersion);
      expect(r.data.total).toBe(operations.length);
      const rows = r.data.operations as Array<{ id: string; method: string; path: string }>;
      expect(rows).toHaveLength(5);
      for (const row of rows) expect(operations).toContainEqual(expect.objectContaining({ id: row.id, method: row.method.toLowerCase(), path: row.path }));
    },
  },
  {
    scenario: "api-ops",
    call: 1,
    answer: "ok",
    check: (r, { fixture }) => {
      const { operations } = serverDocument(fixture.opencodeVersion);
      const rows = r.data.operations as Array<{ id: string }>;
      expect(rows[0]!.id).toBe("session.messages");
      for (const row of rows) expect(operations.map((o) => o.id)).toContain(row.id);
    },
  },
  {
    scenario: "api-ops",
    call: 2,
    answer: "ok",
    check: (r, { fixture }) => {
      const { doc } = serverDocument(fixture.opencodeVersion);
      const op = r.data.operation as { method: string; path: string; body: { required: string[] } };
      const body = (doc.paths as Record<string, Record<string, any>>)[op.path]![op.method.toLowerCase()].requestBody.content["application/json"].schema;
      expect(op.body.required).toEqual(body.required);
    },
  },
]);

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
