// The yardstick for bench:cold: the smallest real MCP server on the same SDK (v2,
// @modelcontextprotocol/server) and transport as ours, with one zod-typed tool, nothing else.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

serveStdio(() => {
  const server = new McpServer({ name: "bare", version: "1.0.0" });
  server.registerTool("echo", { description: "Echo the text back", inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: "text", text }],
  }));
  return server;
});
