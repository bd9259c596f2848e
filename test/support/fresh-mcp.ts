// What a fresh MCP server (one that never saw a session's turns, as after a restart) reports for a
// session: oc_wait and oc_result, read from opencode's record alone.
import { join } from "node:path";
import { startMcpFor, type ToolCall } from "./mcp-client.js";
import type { TestOpencode } from "./opencode.js";

export async function freshReads(server: TestOpencode, sessionId: string): Promise<Record<"oc_wait" | "oc_result", ToolCall>> {
  const fresh = await startMcpFor(server, { OPENCODE_CONDUCTOR_STATE_DIR: join(server.root, `state-fresh-${Date.now()}`) });
  try {
    const waited = await fresh.call("oc_wait", { session_id: sessionId, timeout_s: 60 });
    const read = await fresh.call("oc_result", { session_id: sessionId });
    return { oc_wait: waited, oc_result: read };
  } finally {
    await fresh.close();
  }
}
