// Drives the built MCP server over stdio with the SDK's real Client, as a user's MCP client would.
import { existsSync } from "node:fs";
import { scratchEnv } from "./scratch-home.js";
import { fileURLToPath } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/client";
import type { CallToolResult } from "@modelcontextprotocol/client";

export const CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

export interface McpSession {
  client: Client;
  transport: StdioClientTransport;
  /** Calls a tool and returns its result (text joined, structured content, isError). */
  call(
    name: string,
    args?: Record<string, unknown>,
    options?: { onprogress?: (p: { progress: number; message?: string }) => void; signal?: AbortSignal; timeoutMs?: number },
  ): Promise<ToolCall>;
  close(): Promise<void>;
}

export interface ToolCall {
  text: string;
  data: Record<string, unknown>;
  isError: boolean;
  raw: CallToolResult;
}

/** A tool result as tests read it: the text blocks joined, the structured content, isError. */
export function toolCallOf(raw: CallToolResult): ToolCall {
  const text = raw.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
  return { text, data: (raw.structuredContent ?? {}) as Record<string, unknown>, isError: raw.isError === true, raw };
}

/** The MCP server over stdio, pointed at a test opencode (its URL, password and project directory). */
export function startMcpFor(server: { url: string; password: string; directory: string }, env: Record<string, string> = {}): Promise<McpSession> {
  return startMcp({ OPENCODE_URL: server.url, OPENCODE_PASSWORD: server.password, OPENCODE_CONDUCTOR_DIRECTORY: server.directory, ...env });
}

/**
 * The built server over stdio. `era`: "legacy" (default) opens with the 2025-11-25 `initialize`;
 * "modern" speaks 2026-07-28 only (server/discover, per-request envelope, input_required rounds).
 */
export async function startMcp(
  env: Record<string, string>,
  clientCapabilities: Record<string, unknown> = {},
  options: { era?: "legacy" | "modern" } = {},
): Promise<McpSession> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before the e2e tests.`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI],
    // OPENCODE_BIN reaches the server so that an auto-started opencode is the binary under test.
    env: { ...scratchEnv(), ...(process.env.OPENCODE_BIN ? { OPENCODE_BIN: process.env.OPENCODE_BIN } : {}), ...env },
    stderr: "pipe",
  });
  const client = new Client(
    { name: "e2e-test-client", version: "1.0.0" },
    { capabilities: clientCapabilities, ...(options.era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}) },
  );
  await client.connect(transport);
  return {
    client,
    transport,
    async call(name, args = {}, options = {}) {
      const raw = (await client.callTool(
        { name, arguments: args },
        {
          onprogress: options.onprogress,
          signal: options.signal,
          timeout: options.timeoutMs ?? 120_000,
          resetTimeoutOnProgress: true,
        },
      )) as CallToolResult;
      return toolCallOf(raw);
    },
    async close() {
      await client.close();
    },
  };
}
