// tools/list exactly as a client receives it, for a given configuration, without opencode: used by
// the tool schema snapshots, docs/tools.md and the schema-size benchmark.
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import type { Tool } from "@modelcontextprotocol/client";
import { loadConfig } from "../../config.js";
import { createServer } from "../server.js";

export async function listedTools(env: NodeJS.ProcessEnv = {}): Promise<Tool[]> {
  const config = loadConfig(env);
  const server = createServer({
    config,
    conductor: () => Promise.reject(new Error("tools/list must not connect to opencode")),
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "tool-list", version: "1.0.0" });
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
    await server.close();
  }
}
