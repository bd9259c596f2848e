// Garbage in, bounded out: for each tool, calls whose one oversized field (2 MB) is what the caller
// got wrong (for the prompt tools also the prompt itself: `task`, `message`, `question`), each
// with the error it must answer. Shared by the e2e test (over stdio, as a client sends them: the
// answers are those errors, bounded) and `npm run bench:bounded` (the MCP server in its process on
// a real opencode, so its event loop is the one measured: how long each call takes and stalls it).
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { loadConfig } from "../../src/config.js";
import { createConnection } from "../../src/mcp/opencode-connection.js";
import { createServer } from "../../src/mcp/server.js";
import type { TestOpencode } from "./opencode.js";

const BIG = "x".repeat(2 * 1024 * 1024);
/** A well-formed id of a session no server has: the prompt checks come before any request. */
const SOME_SESSION = "ses_0000000000000000000000000";

export interface BoundedCall {
  /** `tool field`, e.g. "oc_delegate task". */
  name: string;
  tool: string;
  args: Record<string, unknown>;
  /** The error the call answers (the tool's error text; for `inTask`, its only task's error message). */
  error: RegExp;
  /** oc_delegate_parallel reports a task's failure in that task's result (the batch itself succeeds). */
  inTask?: boolean;
}

const notAnId = /`session_id` must be an opencode id starting with "ses_", got "x{200}…" \(2097152 characters\)/;
const noSuchDirectory = /Directory "[^"]*x{100,}…" \(2\d{6} characters\) does not exist/;
/** Refused before sending: the value would travel in the URL or a header, which opencode caps. */
const notSent =
  /not sent: the URL \(an id, a search or another query value\) is 2,\d{3},\d{3} characters, and opencode refuses requests whose URL and headers pass 16,384\. A value is far too long: shorten it\./;
const prompt = (field: string) => new RegExp(`\`${field}\` is 2,097,152 characters; one prompt takes at most 1,000,000`);

export const BOUNDED_CALLS: BoundedCall[] = [
  { name: "oc_delegate session_id", tool: "oc_delegate", args: { task: "t", session_id: BIG }, error: notAnId },
  { name: "oc_delegate task", tool: "oc_delegate", args: { task: BIG }, error: prompt("task") },
  {
    name: "oc_delegate_parallel directory",
    tool: "oc_delegate_parallel",
    args: { tasks: [{ task: "t", directory: BIG }] },
    error: noSuchDirectory,
    inTask: true,
  },
  { name: "oc_delegate_parallel task", tool: "oc_delegate_parallel", args: { tasks: [{ task: BIG }] }, error: prompt("task") },
  { name: "oc_ask directory", tool: "oc_ask", args: { question: "q", directory: BIG }, error: noSuchDirectory },
  { name: "oc_ask question", tool: "oc_ask", args: { question: BIG }, error: prompt("question") },
  { name: "oc_send session_id", tool: "oc_send", args: { session_id: BIG, message: "m" }, error: notAnId },
  { name: "oc_send message", tool: "oc_send", args: { session_id: SOME_SESSION, message: BIG }, error: prompt("message") },
  { name: "oc_wait session_id", tool: "oc_wait", args: { session_id: BIG }, error: notAnId },
  { name: "oc_result session_id", tool: "oc_result", args: { session_id: BIG }, error: notAnId },
  { name: "oc_interrupt session_id", tool: "oc_interrupt", args: { session_id: BIG }, error: notAnId },
  { name: "oc_pending session_id", tool: "oc_pending", args: { session_id: BIG }, error: notAnId },
  { name: "oc_answer request_id", tool: "oc_answer", args: { request_id: BIG, decision: "once" }, error: notSent },
  { name: "oc_sessions search", tool: "oc_sessions", args: { search: BIG }, error: notSent },
  { name: "oc_session session_id", tool: "oc_session", args: { session_id: BIG, action: "info" }, error: notAnId },
  { name: "oc_status directory", tool: "oc_status", args: { directory: BIG }, error: notSent },
  { name: "oc_models search", tool: "oc_models", args: { search: BIG }, error: /`search` is 2,097,152 characters; at most 200 are accepted/ },
  { name: "oc_catalog kind", tool: "oc_catalog", args: { kind: BIG }, error: /Invalid option: expected one of "agents"\|"skills"/ },
  { name: "oc_api_ops search", tool: "oc_api_ops", args: { search: BIG }, error: /`search` is 2097152 characters; at most 200 are accepted/ },
  { name: "oc_api operation", tool: "oc_api", args: { operation: BIG }, error: /`operation` is 2097152 characters; at most 300 are accepted/ },
  { name: "oc_audit session_id", tool: "oc_audit", args: { session_id: BIG }, error: notAnId },
  {
    name: "oc_instances directory",
    tool: "oc_instances",
    args: { action: "stop", directory: BIG },
    error: /`directory` is 2,097,152 characters, longer than any path \(4,096\)/,
  },
  // The workflow inline is the prompt of its steps: past its bound it is refused before parsing.
  { name: "oc_workflow text", tool: "oc_workflow", args: { action: "start", text: BIG }, error: /text: Too big: expected string to have <=262144 characters/ },
];

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
