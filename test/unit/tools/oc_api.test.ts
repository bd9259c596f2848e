// oc_api: schema, what it refuses before sending (a bad body or param, event streams, WebSocket
// routes, writes in read-only mode, a bad query value or a directory an operation does not take),
// and recorded calls (tools/api.json): by id and by a concrete METHOD + path, opencode's own 404,
// query coercion, a long list cut to fit, a v2 route, each compared with the recorded response.
import { describe, expect, it } from "vitest";
import { describeRecordedCalls, expectCleanError, useNoOpencode, useToolReplay } from "../../support/tool-replay.js";
import { expectToolsnap, listedTool } from "../../support/toolsnaps.js";
import { clientHints } from "../../../src/mcp/listing/compact-listing.js";

const TOOL = "oc_api";

describe(`${TOOL} schema`, () => {
  it("matches its snapshot", async () => expectToolsnap(await listedTool(TOOL)));

  it("takes an operation or a method + path; may change anything", async () => {
    const tool = await listedTool(TOOL);
    expect(tool.inputSchema.required ?? []).toEqual([]);
    expect(Object.keys(tool.inputSchema.properties!)).toEqual(["operation", "method", "path", "params", "query", "body", "directory", "max_chars"]);
    expect(clientHints(tool.annotations)).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });
});

describe(`${TOOL} refusals (nothing reaches opencode)`, () => {
  const none = useNoOpencode();
  const call = async (args: Record<string, unknown>, env: Record<string, string> = {}) => (await none.mcp({ env })).call(TOOL, args);

  it("rejects a bad body or param, listing each path and the expected shape", async () => {
    const missing = await call({ operation: "session.prompt_async", params: { sessionID: "ses_1" } });
    expectCleanError(missing, "body.parts: is required");
    expect(missing.text).toContain("Expected body: {");
    const wrong = await call({
      operation: "session.prompt_async",
      params: { sessionID: "ses_1" },
      body: { parts: [{ type: "txt", text: "hi" }, { type: "text" }] },
    });
    expect(wrong.text).toContain('body.parts[0].type: must be one of "text", "file", "agent", "subtask" (got "txt")');
    expect(wrong.text).toContain("body.parts[1].text: is required");
    expect((await call({ operation: "session.get", params: { sessionID: "nope" } })).text).toContain('params.sessionID: must match pattern "^ses"');
  });

  it.each([
    ["a query value of the wrong type", { operation: "session.list", query: { limit: "many" } }, 'query.limit: must be number (got "many")'],
    ["a directory the operation does not take", { operation: "global.health", directory: "/tmp/p" }, "global.health does not take a directory"],
    ["an event stream, pointing to oc_wait", { operation: "global.event" }, /event stream.*oc_wait|oc_wait.*event stream/s],
    ["the other event stream", { operation: "event.subscribe" }, /event stream/],
    ["a WebSocket route, pointing to oc_session shell", { operation: "pty.connect", params: { ptyID: "pty_1" } }, /WebSocket[\s\S]*oc_session action "shell"/],
    ["an unknown operation", { operation: "nope.op" }, /No opencode operation "nope\.op"\. Search with oc_api_ops/],
  ])("refuses %s", async (_name, args, message) => {
    expectCleanError(await call(args), message);
  });

  it("in read-only mode refuses a write", async () => {
    expectCleanError(await call({ operation: "session.create", body: { title: "x" } }, { OPENCODE_CONDUCTOR_READ_ONLY: "1" }), "OPENCODE_CONDUCTOR_READ_ONLY");
  });
});

/** The response body opencode gave for a recorded request. */
const recordedBody = (
  fixture: { interactions: Array<{ method: string; path: string; query: Record<string, string>; body?: unknown }> },
  method: string,
  path: string,
  query: Record<string, string> = {},
) =>
  fixture.interactions.find(
    (i) =>
      i.method === method &&
      i.path === path &&
      Object.entries(query).every(([k, v]) => i.query[k] === v) &&
      Object.keys(i.query).length === Object.keys(query).length + ("directory" in i.query ? 1 : 0),
  )!.body;

describeRecordedCalls(TOOL, [
  {
    scenario: "api",
    call: 0,
    answer: "ok",
    check: (r, { fixture }) => {
      expect(r.data).toMatchObject({ operation: "session.create", status: "ok", truncated: false });
      expect(r.data.result).toEqual(recordedBody(fixture, "POST", "/session"));
    },
  },
  {
    scenario: "api",
    call: 1,
    answer: "ok",
    check: (r, { fixture }) => {
      const body = recordedBody(fixture, "GET", "/session/ses_0001");
      expect(r.data).toEqual({ operation: "session.get", status: "ok", result: body, truncated: false, chars: JSON.stringify(body).length });
    },
  },
  {
    scenario: "api",
    call: 2,
    answer: "tool error",
    check: (r) => expect(r.text).toBe("opencode error (NotFoundError): session.get failed with HTTP 404: Session not found: ses_0000000000000000000000000"),
  },
  {
    scenario: "api",
    call: 3,
    answer: "ok",
    check: (r, { fixture }) => {
      const body = recordedBody(fixture, "GET", "/session");
      expect(r.data).toMatchObject({ truncated: true, chars: JSON.stringify(body).length });
      expect(r.data.note).toContain("`limit`");
      expect(r.data.note).toContain("raise max_chars (now 200)");
    },
  },
  { scenario: "api", call: 4, answer: "tool error", check: (r) => expect(r.text).toContain("nothing was sent") },
  // The string "2" became the number the schema wants: the request matched the recorded ?limit=2.
  {
    scenario: "api",
    call: 5,
    answer: "ok",
    check: (r, { fixture }) => expect(r.data.result).toEqual(recordedBody(fixture, "GET", "/session", { limit: "2" })),
  },
  {
    scenario: "api",
    call: 6,
    answer: "ok",
    check: (r, { fixture }) => {
      expect(r.data).toMatchObject({
        operation: "v2.session.list",
        truncated: true,
        chars: JSON.stringify(recordedBody(fixture, "GET", "/api/session")).length,
      });
      expect(r.data.note).toContain("`cursor`");
    },
  },
  { scenario: "api", call: 7, answer: "ok", check: (r) => expect(r.data.result).toEqual({ healthy: true, version: "1.18.33" }) },
]);

describe(`${TOOL} on the recorded session list`, () => {
  const replay = useToolReplay("api");
  it("cuts a list to the items that fit and names the paging params", async () => {
    const m = await replay.mcp();
    const sessions = recordedBody(replay.fixture, "GET", "/session") as unknown[];
    const r = await m.call(TOOL, { operation: "session.list", max_chars: 1000 });
    const shown = r.data.result as unknown[];
    expect(r.data.truncated).toBe(true);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(sessions.length);
    expect(JSON.stringify(shown).length).toBeLessThanOrEqual(1000);
    expect(shown).toEqual(sessions.slice(0, shown.length));
    expect(r.data.note).toContain(`Showing ${shown.length} of ${sessions.length} items`);
    expect(r.text).toContain(r.data.note as string);
  });

  it("in read-only mode still runs a read", async () => {
    const m = await replay.mcp({ env: { OPENCODE_CONDUCTOR_READ_ONLY: "1" } });
    const r = await m.call(TOOL, { operation: "global.health" });
    expect(r.isError).toBe(false);
    expect(r.data.result).toEqual({ healthy: true, version: "1.18.33" });
  });
});
