// oc_delegate_parallel refuses a task key it does not take (per-task `checks`, `approvals`, a typo)
// instead of dropping it and running the batch without it; nothing reaches opencode.
import { InMemoryTransport, McpServer } from "@modelcontextprotocol/server";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { Client } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { connect } from "../../../src/client/connect.js";
import { loadConfig } from "../../../src/config.js";
import { Conductor } from "../../../src/core/conductor.js";
import { registerTool } from "../../../src/mcp/register-tool.js";
import { type ToolDef } from "../../../src/mcp/tool-def.js";
import { ocDelegateParallel } from "../../../src/mcp/tools/oc_delegate_parallel.js";

async function call(args: Record<string, unknown>) {
  const sent: string[] = [];
  const fetch = async (request: Request) => {
    sent.push(`${request.method} ${new URL(request.url).pathname}`);
    return new Response("{}", { status: 500 });
  };
  const conductor = new Conductor({ client: connect({ url: "http://127.0.0.1:1", fetch }) });
  const server = new McpServer({ name: "test", version: "0" });
  registerTool(server, ocDelegateParallel as unknown as ToolDef, { config: loadConfig({}), conductor: async () => conductor, secrets: () => [] });
  const client = new Client({ name: "test", version: "0" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  try {
    const result = (await client.callTool({ name: "oc_delegate_parallel", arguments: args })) as CallToolResult;
    return { result, text: result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n"), sent };
  } finally {
    await client.close();
  }
}

describe("oc_delegate_parallel task keys", () => {
  it("refuses per-task checks, naming the key, and sends nothing", async () => {
    const { result, text, sent } = await call({ tasks: [{ task: "fix it", checks: ["npm test"] }] });
    expect(result.isError).toBe(true);
    expect(text).toContain("checks");
    expect(text.length).toBeLessThan(1_024);
    expect(sent).toEqual([]);
  });
});
