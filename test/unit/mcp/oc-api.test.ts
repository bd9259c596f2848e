// oc_api_ops and oc_api through a real MCP client (in memory), against a fake fetch: lookups,
// validation before sending, path matching, coercion, refusals and truncation.
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/connect.js";
import { loadConfig, type Config } from "../../../src/config.js";
import { Conductor } from "../../../src/core/conductor.js";
import { apiTools, type ApiTools } from "../../support/api-tools.js";

interface Seen {
  method: string;
  url: URL;
  body: unknown;
}

type Reply = (req: Seen) => unknown;

const json = (data: unknown, status = 200) => new Response(JSON.stringify(data), { status, headers: { "content-type": "application/json" } });

let clients: ApiTools["client"][] = [];
afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  clients = [];
});

/** An MCP client talking to a server with just the two api tools; `seen` records what reached "opencode". */
async function setup(reply: Reply = () => ({}), env: Record<string, string> = {}) {
  const seen: Seen[] = [];
  const fetch = async (request: Request) => {
    const text = await request.text();
    const req = { method: request.method, url: new URL(request.url), body: text ? JSON.parse(text) : undefined };
    seen.push(req);
    const answer = reply(req);
    return answer instanceof Response ? answer : json(answer);
  };
  const config: Config = loadConfig(env);
  const conductor = new Conductor({ client: connect({ url: "http://127.0.0.1:1", fetch }) });
  const { client, call } = await apiTools(conductor, config);
  clients.push(client);
  return { call, seen };
}

describe("oc_api_ops", () => {
  it("finds session.list by words", async () => {
    const { call } = await setup();
    const { result, text, data } = await call("oc_api_ops", { search: "session list" });
    expect(result.isError).toBeFalsy();
    expect(data!.operations[0]).toEqual({ id: "session.list", method: "GET", path: "/session", summary: "List sessions", access: "read" });
    expect(text).toMatch(/^session\.list\s+GET \/session\s+List sessions \[read\]$/m);
    for (const row of data!.operations) expect(row.summary.length).toBeLessThanOrEqual(100);
  });

  it("lists a grouped index with no arguments, up to limit", async () => {
    const { call } = await setup();
    const { text, data } = await call("oc_api_ops", { limit: 5 });
    expect(data!.total).toBe(188);
    expect(data!.operations).toHaveLength(5);
    expect(text).toContain("session (24)");
  });

  it("returns one operation's full input, by id or by METHOD /path", async () => {
    const { call } = await setup();
    const { text, data } = await call("oc_api_ops", { operation: "session.prompt" });
    const op = data!.operation;
    expect(op).toMatchObject({ id: "session.prompt", method: "POST", path: "/session/{sessionID}/message", access: "write", streaming: false });
    expect(op.body.required).toEqual(["parts"]);
    expect(op.body.$defs.TextPartInput).toBeDefined();
    expect(op.path_params.required).toEqual(["sessionID"]);
    expect(op.responses.map((r: { status: string }) => r.status)).toContain("200");
    expect(text).toContain("parts*: (TextPartInput | FilePartInput | AgentPartInput | SubtaskPartInput)[]");

    const byPath = await call("oc_api_ops", { operation: "GET /session/{sessionID}/message" });
    expect(byPath.data!.operation.id).toBe("session.messages");
  });

  it("suggests close ids for an unknown operation", async () => {
    const { call } = await setup();
    const { result, text } = await call("oc_api_ops", { operation: "sesion.mesages" });
    expect(result.isError).toBe(true);
    expect(text).toContain('No opencode operation "sesion.mesages"');
    expect(text).toMatch(/Closest: session\.messages \(GET \/session\/\{sessionID\}\/message\)/);
  });
});

describe("oc_api", () => {
  it("rejects a bad body before sending, listing each path and the expected shape", async () => {
    const { call, seen } = await setup();
    const missing = await call("oc_api", { operation: "session.prompt_async", params: { sessionID: "ses_1" } });
    expect(missing.result.isError).toBe(true);
    expect(missing.text).toContain("body.parts: is required");
    expect(missing.text).toContain("Expected body: {");
    expect(missing.text).toContain("parts*:");

    const wrong = await call("oc_api", { operation: "session.prompt_async", params: { sessionID: "ses_1" }, body: { parts: [{ type: "txt", text: "hi" }, { type: "text" }] } });
    expect(wrong.result.isError).toBe(true);
    expect(wrong.text).toContain('body.parts[0].type: must be one of "text", "file", "agent", "subtask" (got "txt")');
    expect(wrong.text).toContain("body.parts[1].text: is required");
    expect(wrong.text).not.toMatch(/\n\s+at /); // no stack

    const badParam = await call("oc_api", { operation: "session.get", params: { sessionID: "nope" } });
    expect(badParam.text).toContain('params.sessionID: must match pattern "^ses"');
    expect(seen).toHaveLength(0);
  });

  it("resolves a concrete METHOD + path to the operation and its path params", async () => {
    const { call, seen } = await setup(() => ({ id: "ses_1", title: "t" }));
    const { result, data } = await call("oc_api", { method: "GET", path: "/session/ses_1" });
    expect(result.isError).toBeFalsy();
    expect(data).toEqual({ operation: "session.get", status: "ok", result: { id: "ses_1", title: "t" }, truncated: false, chars: 26 });
    expect(seen[0]!.method).toBe("GET");
    expect(seen[0]!.url.pathname).toBe("/session/ses_1");

    // a literal route wins over a template: /session/status is not session.get
    await call("oc_api", { method: "get", path: "/session/status" });
    expect(seen[1]!.url.pathname).toBe("/session/status");
  });

  it("coerces string query values to the schema's types", async () => {
    const { call, seen } = await setup(() => []);
    const { result } = await call("oc_api", { operation: "session.list", query: { limit: "5" }, directory: "/tmp/p" });
    expect(result.isError).toBeFalsy();
    expect(seen[0]!.url.searchParams.get("limit")).toBe("5");
    expect(seen[0]!.url.searchParams.get("directory")).toBe("/tmp/p");

    const bad = await call("oc_api", { operation: "session.list", query: { limit: "many" } });
    expect(bad.text).toContain('query.limit: must be number (got "many")');
    const noDir = await call("oc_api", { operation: "global.health", directory: "/tmp/p" });
    expect(noDir.text).toContain("global.health does not take a directory");
    expect(seen).toHaveLength(1);
  });

  it("refuses event streams, pointing to oc_wait", async () => {
    const { call, seen } = await setup();
    for (const operation of ["global.event", "event.subscribe"]) {
      const { result, text } = await call("oc_api", { operation });
      expect(result.isError).toBe(true);
      expect(text).toContain("event stream");
      expect(text).toContain("oc_wait");
    }
    expect(seen).toHaveLength(0);
  });

  it("refuses WebSocket routes (a terminal), pointing to oc_session shell", async () => {
    const { call, seen } = await setup();
    for (const [operation, params] of [["pty.connect", { ptyID: "pty_1" }], ["v2.pty.connect", { ptyID: "pty_1" }]] as const) {
      const { result, text } = await call("oc_api", { operation, params });
      expect(result.isError).toBe(true);
      expect(text).toContain("WebSocket");
      expect(text).toContain('oc_session action "shell"');
    }
    const ops = await call("oc_api_ops", { operation: "pty.connect" });
    expect(ops.text).toContain("[WebSocket: not callable with oc_api]");
    expect(seen).toHaveLength(0);
  });

  it("in read-only mode refuses POST but runs GET", async () => {
    const { call, seen } = await setup(() => ({ healthy: true }), { OPENCODE_CONDUCTOR_READ_ONLY: "1" });
    const post = await call("oc_api", { operation: "session.create", body: { title: "x" } });
    expect(post.result.isError).toBe(true);
    expect(post.text).toContain("OPENCODE_CONDUCTOR_READ_ONLY");
    expect(seen).toHaveLength(0);
    const get = await call("oc_api", { operation: "global.health" });
    expect(get.result.isError).toBeFalsy();
    expect(get.data!.result).toEqual({ healthy: true });
  });

  it("cuts a big array to the items that fit and names the paging params", async () => {
    const sessions = Array.from({ length: 300 }, (_, i) => ({ id: `ses_${i}`, title: `session number ${i}` }));
    const { call } = await setup(() => sessions);
    const { text, data } = await call("oc_api", { operation: "session.list", max_chars: 2000 });
    expect(data!.truncated).toBe(true);
    expect(data!.chars).toBe(JSON.stringify(sessions).length);
    const shown = data!.result as unknown[];
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.length).toBeLessThan(300);
    expect(JSON.stringify(shown).length).toBeLessThanOrEqual(2000);
    expect(shown).toEqual(sessions.slice(0, shown.length));
    expect(data!.note).toContain(`Showing ${shown.length} of 300 items`);
    expect(data!.note).toContain("`limit`");
    expect(text).toContain(data!.note);
  });

  it("cuts the list inside a v2 envelope and keeps the cursor", async () => {
    const data = Array.from({ length: 100 }, (_, i) => ({ id: `ses_${i}`, title: `v2 session ${i}` }));
    const { call } = await setup(() => ({ data, cursor: { previous: null, next: "abc" } }));
    const answer = await call("oc_api", { operation: "v2.session.list", max_chars: 600 });
    const result = answer.data!.result as { data: unknown[]; cursor: unknown };
    expect(result.cursor).toEqual({ previous: null, next: "abc" });
    expect(result.data.length).toBeGreaterThan(0);
    expect(JSON.stringify(result).length).toBeLessThanOrEqual(600);
    expect(answer.data!.note).toMatch(/Showing \d+ of 100 items of "data"/);
    expect(answer.data!.note).toContain("`cursor`");
  });

  it("surfaces opencode's own error message", async () => {
    const { call } = await setup(() => json({ name: "NotFoundError", data: { message: "Session not found: ses_x" } }, 404));
    const { result, text } = await call("oc_api", { operation: "session.get", params: { sessionID: "ses_x" } });
    expect(result.isError).toBe(true);
    expect(text).toContain("Session not found: ses_x");
  });
});
