// Feature detection and the live spec, with a fake opencode that serves a given /global/health and
// GET /doc: a real older spec (opencode 1.15.0, recorded in test/fixtures/specs) and a newer one made
// from the pinned spec (one operation added, one removed). oc_api_ops lists the server's own
// operations, oc_api validates and sends one only the server has, and refuses a removed one with the
// version-specific error; the typed client is stopped before the request leaves.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/connect.js";
import { firstTestedWith, rangeVerdict } from "../../../src/core/engine/server/compatibility.js";
import { Conductor } from "../../../src/core/conductor.js";
import { guardFeatures, UnsupportedOperationError } from "../../../src/core/engine/server/feature-guard.js";
import { memoryMcp, type MemoryMcp } from "../../support/mcp-memory.js";

const root = join(import.meta.dirname, "..", "..", "..");
const OLD_SPEC = readFileSync(join(root, "test/fixtures/specs/opencode-1.15.0.json"), "utf8");

/** The pinned spec with `x.echo` (POST /x/echo, body {text*}) added and `session.children` removed. */
function newerSpec(): string {
  const spec = JSON.parse(readFileSync(join(root, "spec/openapi.json"), "utf8"));
  spec.paths["/x/echo"] = {
    post: {
      operationId: "x.echo",
      summary: "Echo a text",
      requestBody: {
        required: true,
        content: {
          "application/json": { schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false } },
        },
      },
      responses: {
        "200": { description: "The text", content: { "application/json": { schema: { type: "object", properties: { echoed: { type: "string" } } } } } },
      },
    },
  };
  delete spec.paths["/session/{sessionID}/children"];
  return JSON.stringify(spec);
}

interface Seen {
  method: string;
  path: string;
  body: unknown;
}

const dirs: string[] = [];
let clients: MemoryMcp[] = [];
afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  clients = [];
});
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "occ-live-spec-"));
  dirs.push(dir);
  return dir;
}

/** A fake opencode of `version` serving `doc`, a guarded conductor on it, and the two api tools. */
async function setup(version: string, doc: string | null, state = stateDir()) {
  const seen: Seen[] = [];
  let docs = 0;
  const fetch = async (request: Request) => {
    const url = new URL(request.url);
    if (url.pathname === "/global/health") return Response.json({ healthy: true, version });
    if (url.pathname === "/doc") docs += 1;
    if (url.pathname === "/doc")
      return doc === null ? new Response("down", { status: 500 }) : new Response(doc, { headers: { "content-type": "application/json" } });
    const text = await request.text();
    seen.push({ method: request.method, path: url.pathname, body: text ? JSON.parse(text) : undefined });
    return Response.json(url.pathname === "/x/echo" ? { echoed: (JSON.parse(text) as { text: string }).text } : []);
  };
  const conductor = new Conductor({ client: connect({ url: "http://127.0.0.1:1", fetch }) });
  guardFeatures(conductor.client, { stateDir: state });
  const mcp = await memoryMcp({ conductor, env: { OPENCODE_CONDUCTOR_TOOLSETS: "api" } });
  clients.push(mcp);
  const call = mcp.call;
  return { call, seen, conductor, state, docRequests: () => docs };
}

describe("an older opencode (1.15.0's real spec)", () => {
  const since = firstTestedWith("v2.session.get");

  it("the matrix data names the oldest tested release with v2.session.get", () => {
    expect(since).toMatch(/^1\.\d+\.\d+$/);
  });

  it("oc_api_ops lists the server's 131 operations, not the pinned 188", async () => {
    const { call } = await setup("1.15.0", OLD_SPEC);
    const r = await call("oc_api_ops", { limit: 1 });
    expect(r.isError, r.text).toBe(false);
    expect(r.data).toMatchObject({ total: 131, source: "server", version: "1.15.0" });
    expect(r.text).toContain("131 operations of the connected opencode 1.15.0's own spec");
  });

  it("oc_api refuses a pinned operation the server lacks, naming both versions; nothing is sent", async () => {
    const { call, seen } = await setup("1.15.0", OLD_SPEC);
    const r = await call("oc_api", { operation: "v2.session.get", params: { sessionID: "ses_1" } });
    expect(r.isError).toBe(true);
    expect(r.text).toBe(
      `opencode error (UnsupportedOperationError): opencode 1.15.0 has no operation v2.session.get (GET /api/session/{sessionID}), so nothing was sent. The oldest tested opencode release that has it is ${since}. Upgrade opencode (e.g. \`npm i -g opencode-ai@1.18.33\`); the server status shows the tested range.`,
    );
    expect(seen).toEqual([]);
  });

  it("the typed client is stopped before the request leaves, with the same error", async () => {
    const { conductor, seen } = await setup("1.15.0", OLD_SPEC);
    const error = await conductor.client.call("v2.session.get", { path: { sessionID: "ses_1" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedOperationError);
    expect(error).toMatchObject({ serverVersion: "1.15.0", since, operationId: "v2.session.get" });
    await conductor.client.call("session.list");
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(["GET /session"]);
  });

  it("refuses an operation the matrix found broken on old releases (session.diff before 1.14.48)", async () => {
    const { conductor, seen } = await setup("1.3.2", OLD_SPEC);
    const error = await conductor.client.call("session.diff", { path: { sessionID: "ses_1" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedOperationError);
    expect((error as Error).message).toContain(
      "session.diff (GET /session/{sessionID}/diff) does not work on opencode 1.3.2: opencode records no per-turn diff there",
    );
    expect((error as Error).message).toContain("It works from opencode 1.14.48.");
    expect(seen).toEqual([]);
  });
});

describe("a newer opencode (pinned spec + x.echo − session.children)", () => {
  it("oc_api_ops finds and describes the operation only the server has", async () => {
    const { call } = await setup("9.9.9", newerSpec());
    const found = await call("oc_api_ops", { search: "echo" });
    expect(found.data.operations).toEqual([{ id: "x.echo", method: "POST", path: "/x/echo", summary: "Echo a text", access: "write" }]);
    const one = await call("oc_api_ops", { operation: "x.echo" });
    expect(one.isError, one.text).toBe(false);
    expect(one.data.operation).toMatchObject({ id: "x.echo", body: { required: ["text"] }, body_required: true });
  });

  it("oc_api validates against the server's schema, then sends it", async () => {
    const { call, seen } = await setup("9.9.9", newerSpec());
    const bad = await call("oc_api", { operation: "x.echo", body: { txt: "hi" } });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain("body.text: is required");
    expect(bad.text).toContain("body.txt: is not allowed; allowed: text");
    expect(seen).toEqual([]);
    const ok = await call("oc_api", { method: "POST", path: "/x/echo", body: { text: "hi" } });
    expect(ok.isError, ok.text).toBe(false);
    expect(ok.data.result).toEqual({ echoed: "hi" });
    expect(seen).toEqual([{ method: "POST", path: "/x/echo", body: { text: "hi" } }]);
  });

  it("oc_api refuses an operation the server removed, with the reason", async () => {
    const { call, seen } = await setup("9.9.9", newerSpec());
    const r = await call("oc_api", { operation: "session.children", params: { sessionID: "ses_1" } });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("opencode 9.9.9 has no operation session.children (GET /session/{sessionID}/children), so nothing was sent.");
    expect(seen).toEqual([]);
    expect(rangeVerdict("9.9.9")).toMatch(/^newer than the tested range/);
  });

  it("caches the spec per version in the state dir: a restart with /doc down still knows it", async () => {
    const first = await setup("9.9.9", newerSpec());
    await first.call("oc_api_ops", { limit: 1 });
    expect(existsSync(join(first.state, "opencode-specs", "9.9.9.json"))).toBe(true);
    const again = await setup("9.9.9", null, first.state);
    const r = await again.call("oc_api_ops", { search: "echo" });
    expect(r.data).toMatchObject({ total: 1, source: "server" });
  });
});

describe("a server whose GET /doc fails", () => {
  it("lets requests through unchecked, and does not ask again on every request", async () => {
    const { conductor, seen, docRequests } = await setup("1.18.33", null);
    await conductor.client.call("session.list");
    await conductor.client.call("session.list");
    expect(seen.map((s) => s.path)).toEqual(["/session", "/session"]);
    expect(docRequests()).toBe(1);
  });
});

describe("the pinned spec", () => {
  it("a server serving the pinned spec byte for byte keeps the generated table", async () => {
    const { call } = await setup("1.18.34", readFileSync(join(root, "spec/openapi.json"), "utf8"));
    const r = await call("oc_api_ops", { limit: 1 });
    expect(r.data).toMatchObject({ total: 188, source: "pinned" });
  });
});
