// The real MCP server (src/mcp/server.ts) and the SDK's real Client, linked in memory
// (InMemoryTransport): for the tools' unit tests (against the fake opencode) and for recording
// what the tools send to a real opencode (`npm run record -- --tools`). Each helper gets its own
// temp state dir (audit trail, the delegation ledger and task records) and removes it on close.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import type { CallToolResult, ClientCapabilities, Tool } from "@modelcontextprotocol/client";
import { connect, type OpencodeClient } from "../../src/client/index.js";
import { loadConfig, type Config } from "../../src/config.js";
import { Conductor } from "../../src/core/conductor.js";
import { sharedWriter } from "../../src/core/governance/jsonl-writer.js";
import { taskRecordsPath } from "../../src/core/governance/task-records.js";
import { createServer, type ServerOptions } from "../../src/mcp/server.js";
import { REPLAY_DIRECTORY, REPLAY_URL } from "./fake-opencode.js";
import { toolCallOf, type ToolCall } from "./mcp-client.js";

export interface MemoryMcpOptions {
  /** The opencode client the tools use; default: one on the fake opencode's URL and directory. */
  client?: OpencodeClient;
  /** A conductor of the test's own (e.g. with its features guarded); default: one on `client`. */
  conductor?: Conductor;
  /** Environment the server's config is read from, over OPENCODE_URL, the directory, a temp state dir and all toolsets. */
  env?: Record<string, string>;
  /** What the test client declares (e.g. `{ elicitation: { form: {} } }`). */
  capabilities?: ClientCapabilities;
  /** Private instances and connection facts (oc_instances, oc_status, isolation: "instance"). */
  connection?: ServerOptions["connection"];
}

export interface MemoryMcp {
  client: Client;
  conductor: Conductor;
  config: Config;
  /** The temp state dir (audit.jsonl, delegations/, tasks.jsonl). */
  stateDir: string;
  /** Calls a tool: its text joined, structured content, isError. */
  call(name: string, args?: Record<string, unknown>, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<ToolCall>;
  listTools(): Promise<Tool[]>;
  close(): Promise<void>;
}

export async function memoryMcp(options: MemoryMcpOptions = {}): Promise<MemoryMcp> {
  const opencode = options.conductor?.client ?? options.client ?? connect({ url: REPLAY_URL, directory: REPLAY_DIRECTORY });
  const stateDir = mkdtempSync(join(tmpdir(), "occ-memory-mcp-"));
  const config = loadConfig({
    OPENCODE_URL: opencode.url,
    OPENCODE_CONDUCTOR_DIRECTORY: opencode.directory ?? REPLAY_DIRECTORY,
    OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
    OPENCODE_CONDUCTOR_TOOLSETS: "all",
    ...options.env,
  });
  const conductor = options.conductor ?? new Conductor({ client: opencode, stateDir });
  const server = createServer({ config, conductor: async () => conductor, connection: options.connection });
  const client = new Client({ name: "memory-test-client", version: "1.0.0" }, { capabilities: options.capabilities ?? {} });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return {
    client,
    conductor,
    config,
    stateDir,
    async call(name, args = {}, o = {}) {
      const raw = (await client.callTool({ name, arguments: args }, { signal: o.signal, timeout: o.timeoutMs ?? 60_000 })) as CallToolResult;
      return toolCallOf(raw);
    },
    async listTools() {
      return (await client.listTools()).tools;
    },
    async close() {
      conductor.close();
      await client.close();
      await server.close();
      // A line the trails are still writing would make the removed folder again: let them land first.
      await Promise.all([taskRecordsPath(stateDir), config.auditPath].flatMap((p) => (p ? [sharedWriter(p).settled()] : [])));
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
