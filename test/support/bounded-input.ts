// Garbage in, bounded out: for each tool, a call whose one oversized field (2 MB) is what the caller
// got wrong, and the full MCP server in this process (in-memory transport) on a real opencode, so
// its event loop is the one a measurement sees. Shared by the e2e test (the answers are bounded) and
// `npm run bench:bounded` (how long each call takes and stalls the event loop).
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { loadConfig } from "../../src/config.js";
import { createConnection } from "../../src/mcp/connection.js";
import { createServer } from "../../src/mcp/server.js";
import type { TestOpencode } from "./opencode.js";

const BIG = "x".repeat(2 * 1024 * 1024);

export const BOUNDED_CALLS: Record<string, Record<string, unknown>> = {
  oc_delegate: { task: "t", session_id: BIG },
  oc_delegate_parallel: { tasks: [{ task: "t", directory: BIG }] },
  oc_ask: { question: "q", directory: BIG },
  oc_send: { session_id: BIG, message: "m" },
  oc_wait: { session_id: BIG },
  oc_result: { session_id: BIG },
  oc_interrupt: { session_id: BIG },
  oc_pending: { session_id: BIG },
  oc_answer: { request_id: BIG, decision: "once" },
  oc_sessions: { search: BIG },
  oc_session: { session_id: BIG, action: "info" },
  oc_status: { directory: BIG },
  oc_models: { search: BIG },
  oc_catalog: { kind: BIG },
  oc_api_ops: { search: BIG },
  oc_api: { operation: BIG },
  oc_audit: { session_id: BIG },
  oc_instances: { action: "stop", directory: BIG },
};

export interface InProcessMcp {
  client: Client;
  /** The audit trail the server writes (one line per call that changes something). */
  auditPath: string;
  close(): Promise<void>;
}

/** Every toolset of the MCP server, in this process, on `server`; connected once (an oc_status call). */
export async function inProcessMcp(server: TestOpencode): Promise<InProcessMcp> {
  const auditPath = join(server.root, "audit.jsonl");
  const config = loadConfig({
    OPENCODE_URL: server.url,
    OPENCODE_PASSWORD: server.password,
    OPENCODE_CONDUCTOR_DIRECTORY: server.directory,
    OPENCODE_CONDUCTOR_TOOLSETS: "all",
    OPENCODE_CONDUCTOR_STATE_DIR: join(server.root, "state"),
    OPENCODE_CONDUCTOR_AUDIT: auditPath,
  });
  const connection = createConnection(config);
  const mcp = createServer({ config, conductor: connection.conductor, connection, secrets: connection.secrets });
  const client = new Client({ name: "bounded", version: "1" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([mcp.connect(a), client.connect(b)]);
  await client.callTool({ name: "oc_status", arguments: {} });
  return {
    client,
    auditPath,
    async close() {
      await client.close();
      await connection.close();
    },
  };
}

export const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
