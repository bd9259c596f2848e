// oc_api against a real opencode through an MCP client (in memory): create and list sessions, a
// concrete METHOD + path, opencode's 404 message, and a validation error that sends nothing.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { Conductor } from "../../../src/core/conductor.js";
import { registerTool } from "../../../src/mcp/register-tool.js";
import { type ToolDef } from "../../../src/mcp/tool-def.js";
import { ocApi } from "../../../src/mcp/tools/oc_api.js";
import { ocApiOps } from "../../../src/mcp/tools/oc_api_ops.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";

let server: TestOpencode;
let conductor: Conductor;
let client: Client;
let requests = 0; // every HTTP request the conductor sent to opencode

beforeAll(async () => {
  server = await startOpencode();
  const fetch = (request: Request) => {
    requests += 1;
    return globalThis.fetch(request);
  };
  conductor = new Conductor({ url: server.url, password: server.password, directory: server.directory, fetch });
  const mcp = new McpServer({ name: "test", version: "0" });
  const config = loadConfig({});
  for (const tool of [ocApiOps, ocApi] as unknown as ToolDef[]) registerTool(mcp, tool, { config, conductor: async () => conductor, secrets: () => [server.password] });
  client = new Client({ name: "test", version: "0" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([mcp.connect(a), client.connect(b)]);
});

afterAll(async () => {
  await client?.close();
  conductor?.close();
  await server?.stop();
});

async function api(args: Record<string, unknown>) {
  const result = (await client.callTool({ name: "oc_api", arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
  return { result, text, data: result.structuredContent as { operation: string; result: any; truncated: boolean; chars: number } | undefined };
}

describe("oc_api against real opencode", () => {
  let sessionId: string;

  it("creates a session, then lists it", async () => {
    const created = await api({ operation: "session.create", body: { title: "x" } });
    expect(created.result.isError).toBeFalsy();
    expect(created.data!.operation).toBe("session.create");
    sessionId = created.data!.result.id;
    expect(sessionId).toMatch(/^ses_/);
    expect(created.data!.result.directory).toBe(server.directory);

    const listed = await api({ operation: "session.list" });
    expect(listed.result.isError).toBeFalsy();
    expect(listed.data!.result.map((s: { id: string }) => s.id)).toContain(sessionId);
    expect(listed.text).toContain(sessionId);
  });

  it("gets it by a concrete METHOD + path", async () => {
    const got = await api({ method: "GET", path: `/session/${sessionId}` });
    expect(got.result.isError).toBeFalsy();
    expect(got.data!.operation).toBe("session.get");
    expect(got.data!.result).toMatchObject({ id: sessionId, title: "x" });
  });

  it("surfaces a 404 with opencode's message", async () => {
    const missing = await api({ method: "GET", path: "/session/ses_0000000000000000000000000" });
    expect(missing.result.isError).toBe(true);
    expect(missing.text).toContain("Session not found");
    expect(missing.text).not.toContain(server.password);
  });

  it("sends nothing when the arguments do not validate", async () => {
    const before = requests;
    const bad = await api({ operation: "session.prompt_async", params: { sessionID: sessionId }, body: { parts: [{ type: "txt", text: "hi" }] } });
    expect(bad.result.isError).toBe(true);
    expect(bad.text).toContain("body.parts[0].type: must be one of");
    expect(requests).toBe(before);
  });
});
