// An opencode 2.x test server with the MCP server pointed at it and a v2 client to read what the
// server recorded, for the e2e-v2 suites that drive the tools.
import { afterAll, beforeAll, beforeEach } from "vitest";
import { connectV2, type OpencodeV2Client } from "../../src/client/v2/index.js";
import { startMcpFor, type McpSession } from "./mcp-client.js";
import { startOpencode2, type V2Message } from "./opencode2.js";
import type { StartOpencodeOptions, TestOpencode } from "./opencode.js";

export interface McpOnV2 {
  server: TestOpencode;
  mcp: McpSession;
  v2: OpencodeV2Client;
  /** The session's messages as the 2.x server recorded them, oldest first. */
  recorded(sessionID: string): Promise<V2Message[]>;
  stop(): Promise<void>;
}

export async function startMcpOnV2(options: Omit<StartOpencodeOptions, "binary"> = {}, env: Record<string, string> = {}): Promise<McpOnV2> {
  const server = await startOpencode2(options);
  try {
    const v2 = await connectV2({ url: server.url, password: server.password });
    const mcp = await startMcpFor(server, env);
    return {
      server,
      mcp,
      v2,
      async recorded(sessionID) {
        const page = (await v2.request("session.messages", { path: { sessionID }, query: { order: "asc", limit: "200" } })) as { data: V2Message[] };
        return page.data;
      },
      async stop() {
        await mcp.close();
        await server.stop();
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/**
 * Starts one before the file's tests and stops it after; read the fields inside tests. Each test
 * starts with an empty model script (a test that failed must not leave its steps to the next).
 */
export function useMcpOnV2(options: Omit<StartOpencodeOptions, "binary"> = {}, env: Record<string, string> = {}): McpOnV2 {
  const h = {} as McpOnV2;
  beforeAll(async () => {
    Object.assign(h, await startMcpOnV2(options, env));
  });
  beforeEach(() => h.server.model.clear());
  afterAll(() => h.stop?.());
  return h;
}
