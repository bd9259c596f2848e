// Builds the MCP server: the tools of the configured toolsets (read-only ones only in read-only
// mode), server instructions, logging, session and audit resources, delegation prompts. Nothing here contacts opencode: the first tool call connects.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { ConfigError, DEFAULT_TOOLSETS, type Config } from "../config.js";
import { AuditLog } from "../core/governance/audit.js";
import type { Conductor } from "../core/conductor.js";
import type { Connection } from "./connection.js";
import { RequestLog } from "../core/governance/request-ids.js";
import { TaskRecords, taskRecordsPath } from "../core/governance/task-records.js";
import { VERSION } from "../version.js";
import { registerPrompts } from "./prompts.js";
import { registerResources } from "./resources.js";
import { registerTool } from "./register-tool.js";
import { type ToolDef } from "./tool-def.js";
import { toolListing } from "./listing/compact-listing.js";
import { instructionsFor } from "./instructions.js";
import { ALL_TOOLS } from "./tools/index.js";

/** The instructions of a server with the default toolsets (each server sends those of its own tools). */
export const INSTRUCTIONS = instructionsFor(selectTools({ toolsets: DEFAULT_TOOLSETS, readOnly: false }));

export interface ServerOptions {
  config: Config;
  /** Connects to opencode on first use; with a session id, the server holding that session. */
  conductor(sessionId?: string): Promise<Conductor>;
  /** Private instances and how the connection was found (the CLI passes its Connection). */
  connection?: Pick<Connection, "describe" | "otherServers">;
  /** Values that must never appear in an answer. */
  secrets?: () => string[];
  /** Default: the file of OPENCODE_CONDUCTOR_AUDIT (or none when `off`). */
  audit?: AuditLog;
}

/** Refuses a configuration that would leave a client with no tools at all. */
export function assertSomeTools(config: Pick<Config, "toolsets" | "readOnly">): void {
  if (selectTools(config).length > 0) return;
  throw new ConfigError(
    `OPENCODE_CONDUCTOR_TOOLSETS=${config.toolsets.join(",")} with OPENCODE_CONDUCTOR_READ_ONLY=1 leaves no tools (read-only mode keeps only read-only ones): add a toolset such as discover or sessions, or unset OPENCODE_CONDUCTOR_READ_ONLY.`,
  );
}

/** The tools this configuration exposes. */
export function selectTools(config: Pick<Config, "toolsets" | "readOnly">, tools: readonly ToolDef[] = ALL_TOOLS): ToolDef[] {
  return tools.filter((t) => config.toolsets.includes(t.toolset) && (!config.readOnly || t.annotations.readOnlyHint || t.readOnlyMode === "self-checked"));
}

// One log per state dir in this process: its writes are serialised, and the HTTP transport builds
// a server per client session. It touches the disk only when a request_id is used.
const requestLogs = new Map<string, RequestLog>();
function requestLog(stateDir: string): RequestLog {
  let log = requestLogs.get(stateDir);
  if (!log) requestLogs.set(stateDir, (log = new RequestLog(stateDir)));
  return log;
}

// The same for the task records the web console reads (one appender per file in this process).
const taskLogs = new Map<string, TaskRecords>();
function taskLog(stateDir: string): TaskRecords {
  let log = taskLogs.get(stateDir);
  if (!log) taskLogs.set(stateDir, (log = new TaskRecords(taskRecordsPath(stateDir))));
  return log;
}

export function createServer(options: ServerOptions): McpServer {
  const server = new McpServer(
    { name: "opencode-conductor", title: "opencode conductor", version: VERSION },
    { instructions: instructionsFor(selectTools(options.config)), capabilities: { logging: {} } },
  );
  const secrets = () => [options.config.opencodePassword ?? "", options.config.httpToken ?? "", ...(options.secrets?.() ?? [])];
  const audit = options.audit ?? new AuditLog(options.config.auditPath);
  const requests = requestLog(options.config.stateDir);
  assertSomeTools(options.config);
  const tools = selectTools(options.config);
  for (const tool of tools) {
    registerTool(server, tool, {
      config: options.config,
      conductor: options.conductor,
      connection: options.connection?.describe,
      otherServers: options.connection?.otherServers,
      secrets,
      audit,
      requests,
      tasks: taskLog(options.config.stateDir),
    });
  }
  // Listed separately from tools: they cost a client nothing until it asks for them.
  registerResources(server, { config: options.config, conductor: options.conductor, secrets });
  registerPrompts(server);
  // The SDK's own tools/list would convert every schema on every request and add what carries no meaning.
  const listing = listingOf(tools);
  server.server.removeRequestHandler(ListToolsRequestSchema.shape.method.value);
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));
  return server;
}

// Built once per tool selection (the HTTP transport builds a server per client session).
const listings = new Map<string, Tool[]>();
function listingOf(tools: ToolDef[]): Tool[] {
  const key = tools.map((t) => t.name).join(",");
  let listing = listings.get(key);
  if (!listing) listings.set(key, (listing = toolListing(tools)));
  return listing;
}
