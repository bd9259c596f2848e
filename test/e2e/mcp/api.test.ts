// oc_api against a real opencode through an MCP client (in memory): create and list sessions, a
// concrete METHOD + path, opencode's 404 message, and a validation error that sends nothing.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/index.js";
import { memoryMcp, type MemoryMcp } from "../../support/mcp-memory.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";

let server: TestOpencode;
let mcp: MemoryMcp;
let requests = 0; // every HTTP request the conductor sent to opencode

beforeAll(async () => {
  server = await startOpencode();
  const fetch = (request: Request) => {
    requests += 1;
    return globalThis.fetch(request);
  };
  const client = connect({ url: server.url, password: server.password, directory: server.directory, fetch });
  // The password in the config: answers are scrubbed of it.
  mcp = await memoryMcp({ client, env: { OPENCODE_PASSWORD: server.password, OPENCODE_CONDUCTOR_TOOLSETS: "api" } });
});

afterAll(async () => {
  await mcp?.close();
  await server?.stop();
});

async function api(args: Record<string, unknown>) {
  const r = await mcp.call("oc_api", args);
  return { result: r.raw as CallToolResult, text: r.text, data: r.data as { operation: string; result: any; truncated: boolean; chars: number } | undefined };
}

/** A session made through oc_api (each test makes its own). */
async function created(title: string): Promise<string> {
  const r = await api({ operation: "session.create", body: { title } });
  expect(r.result.isError, r.text).toBeFalsy();
  return r.data!.result.id;
}

describe("oc_api against real opencode", () => {
  it("creates a session, then lists it", async () => {
    const created = await api({ operation: "session.create", body: { title: "x" } });
    expect(created.result.isError).toBeFalsy();
    expect(created.data!.operation).toBe("session.create");
    const sessionId = created.data!.result.id;
    expect(sessionId).toMatch(/^ses_/);
    expect(created.data!.result.directory).toBe(server.directory);

    const listed = await api({ operation: "session.list" });
    expect(listed.result.isError).toBeFalsy();
    expect(listed.data!.result.map((s: { id: string }) => s.id)).toContain(sessionId);
    expect(listed.text).toContain(sessionId);
  });

  it("gets a session by a concrete METHOD + path", async () => {
    const sessionId = await created("by path");
    const got = await api({ method: "GET", path: `/session/${sessionId}` });
    expect(got.result.isError).toBeFalsy();
    expect(got.data!.operation).toBe("session.get");
    expect(got.data!.result).toMatchObject({ id: sessionId, title: "by path" });
  });

  it("surfaces a 404 with opencode's message", async () => {
    const missing = await api({ method: "GET", path: "/session/ses_0000000000000000000000000" });
    expect(missing.result.isError).toBe(true);
    expect(missing.text).toContain("Session not found");
    expect(missing.text).not.toContain(server.password);
  });

  it("sends nothing when the arguments do not validate", async () => {
    const sessionId = await created("validation");
    const before = requests;
    const bad = await api({ operation: "session.prompt_async", params: { sessionID: sessionId }, body: { parts: [{ type: "txt", text: "hi" }] } });
    expect(bad.result.isError).toBe(true);
    expect(bad.text).toContain("body.parts[0].type: must be one of");
    expect(requests).toBe(before);
  });
});
