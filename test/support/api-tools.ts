// oc_api_ops and oc_api behind a real MCP client (in memory), on a given conductor: for the unit
// tests of the generic API tools.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Config } from "../../src/config.js";
import type { Conductor } from "../../src/core/conductor.js";
import { registerTool } from "../../src/mcp/register-tool.js";
import { type ToolDef } from "../../src/mcp/tool-def.js";
import { ocApi } from "../../src/mcp/tools/oc_api.js";
import { ocApiOps } from "../../src/mcp/tools/oc_api_ops.js";

export interface ApiTools {
  client: Client;
  call(name: string, args: Record<string, unknown>): Promise<{ result: CallToolResult; isError: boolean; text: string; data: Record<string, any> }>;
}

export async function apiTools(conductor: Conductor, config: Config): Promise<ApiTools> {
  const server = new McpServer({ name: "test", version: "0" });
  for (const tool of [ocApiOps, ocApi] as unknown as ToolDef[]) registerTool(server, tool, { config, conductor: async () => conductor, secrets: () => [] });
  const client = new Client({ name: "test", version: "0" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  return {
    client,
    async call(name, args) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
      return { result, isError: result.isError === true, text, data: result.structuredContent as Record<string, any> };
    },
  };
}
