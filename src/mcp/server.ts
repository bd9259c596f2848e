// Builds the MCP server: the tools of the configured toolsets (read-only ones only in read-only
// mode), server instructions, logging, session and audit resources, delegation prompts. Nothing here contacts opencode: the first tool call connects.
import { McpServer } from "@modelcontextprotocol/server";
import type { Tool } from "@modelcontextprotocol/server";
import { ConfigError, DEFAULT_TOOLSETS, type Config } from "../config.js";
import { AuditLog } from "../core/governance/audit.js";
import type { Conductor } from "../core/conductor.js";
import type { Connection } from "./opencode-connection.js";
import { sharedWriter } from "../core/governance/jsonl-writer.js";
import { taskRecordsPath } from "../core/governance/task-records.js";
import { reportOnStderr, type Trail } from "../core/governance/trail-health.js";
import { VERSION } from "../version.js";
import { registerPrompts } from "./prompts.js";
import { KeptAnswers, registerAnswerPages } from "./answer-budget.js";
import { registerWorkflowPrompt } from "./workflow-prompt.js";
import { registerResources } from "./resources.js";
import { recentSessionsOf } from "./recent-sessions.js";
import { registerLazyTool } from "./lazy-tool.js";
import { scrub } from "./scrub.js";
import { sendTaskHandles } from "./tasks/handles.js";
import { registerTaskMethods } from "./tasks/methods.js";
import type { ToolDef } from "./tool-def.js";
import { toolListing } from "./listing/compact-listing.js";
import { BUILT_TOOLS, type BuiltTool } from "./listing/built-tools.js";
import { instructionsFor } from "./instructions.js";
import type { ServedSkills } from "./lazy-skills.js";

/** The instructions of the CLI's server with the default toolsets (each server sends those of its own tools). */
export const INSTRUCTIONS = instructionsFor(selectTools({ toolsets: DEFAULT_TOOLSETS, readOnly: false }), true);

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
  /** Skills served over MCP (lazy-skills.ts over skills.ts `packageSkills()`: the delegation skill); none without. */
  skills?: ServedSkills;
}

/** Refuses a configuration that would leave a client with no tools at all. */
export function assertSomeTools(config: Pick<Config, "toolsets" | "readOnly">): void {
  if (selectTools(config).length > 0) return;
  throw new ConfigError(
    `OPENCODE_CONDUCTOR_TOOLSETS=${config.toolsets.join(",")} with OPENCODE_CONDUCTOR_READ_ONLY=1 leaves no tools (read-only mode keeps only read-only ones): add a toolset such as discover or sessions, or unset OPENCODE_CONDUCTOR_READ_ONLY.`,
  );
}

/** What decides whether a configuration exposes a tool. */
type Selectable = Pick<ToolDef, "toolset" | "annotations" | "readOnlyMode">;

/**
 * The tools this configuration exposes: of this package (as the build wrote them: built-tools.ts,
 * so that a start needs no tool module), or of `tools`.
 */
export function selectTools(config: Pick<Config, "toolsets" | "readOnly">): BuiltTool[];
export function selectTools<T extends Selectable>(config: Pick<Config, "toolsets" | "readOnly">, tools: readonly T[]): T[];
export function selectTools(config: Pick<Config, "toolsets" | "readOnly">, tools: readonly Selectable[] = BUILT_TOOLS): Selectable[] {
  return tools.filter((t) => config.toolsets.includes(t.toolset) && (!config.readOnly || t.annotations.readOnlyHint || t.readOnlyMode === "self-checked"));
}

// The audit trail and the task records (which the core writes): one writer per file in this process
// however many servers (HTTP sessions) use it, each failure to write one said on stderr once.
function trailsFor(config: Config, audit: AuditLog): Trail[] {
  const trails: Trail[] = [
    ...(audit.writer ? [{ name: "audit trail" as const, writer: audit.writer }] : []),
    { name: "task records", writer: sharedWriter(taskRecordsPath(config.stateDir), config.rotation) },
  ];
  reportOnStderr(trails);
  return trails;
}

export function createServer(options: ServerOptions): McpServer {
  const server = new McpServer(
    { name: "opencode-conductor", title: "opencode conductor", version: VERSION },
    {
      instructions: instructionsFor(selectTools(options.config), options.skills !== undefined),
      capabilities: { logging: {} },
      // A call sent again after an input_required round: only state this state dir's key signed gets
      // through (the verifier loads with the first such call: approvals/rounds.ts).
      requestState: {
        verify: async (state, request) => (await import("./approvals/rounds.js")).roundVerifier(options.config.stateDir)(state, request),
      },
    },
  );
  const secrets = () => [options.config.opencodePassword ?? "", options.config.httpToken ?? "", ...(options.secrets?.() ?? [])];
  const audit = options.audit ?? new AuditLog(options.config.auditPath, options.config.rotation);
  const trails = trailsFor(options.config, audit);
  assertSomeTools(options.config);
  const tools = selectTools(options.config);
  const kept = new KeptAnswers();
  // Once a call has reached opencode, resources/list may show its sessions (read in the background).
  const recent = recentSessionsOf(options.conductor);
  const conductor = (sessionId?: string) => options.conductor(sessionId).then((c) => (recent.markConnected(), c));
  // Each tool's module loads on its first call (lazy-tool.ts): a start lists them from built-tools.json.
  for (const tool of tools) {
    registerLazyTool(server, tool, {
      config: options.config,
      conductor,
      afterCall: () => recent.invalidate(),
      connection: options.connection?.describe,
      otherServers: options.connection?.otherServers,
      secrets,
      audit,
      trails,
      kept,
    });
  }
  // Listed separately from tools: they cost a client nothing until it asks for them.
  registerResources(server, { config: options.config, conductor, secrets, recent });
  registerAnswerPages(server, kept);
  const stopListening = recent.onChange(() => {
    if (server.isConnected()) server.sendResourceListChanged();
  });
  const previous = server.server.onclose;
  server.server.onclose = () => {
    stopListening();
    previous?.();
  };
  registerPrompts(server);
  registerWorkflowPrompt(server, options.config.directory);
  options.skills?.attach(server);
  // The SDK's own tools/list would convert every schema on every request and add what carries no meaning.
  const listing = listingOf(tools);
  server.server.removeRequestHandler("tools/list");
  server.server.setRequestHandler("tools/list", () => ({ tools: listing }));
  // The Tasks extension: tasks/* over conductor.delegations, and tools/call answering a task handle.
  registerTaskMethods(server, { config: options.config, conductor, audit, scrub: (text) => scrub(text, secrets()) });
  sendTaskHandles(server);
  return server;
}

// Built once per tool selection (the HTTP transport builds a server per client session), from the
// schemas converted at build time: converting them at start cost more than the rest of the listing.
const listings = new Map<string, Tool[]>();
function listingOf(tools: BuiltTool[]): Tool[] {
  const key = tools.map((t) => t.name).join(",");
  let listing = listings.get(key);
  if (!listing) listings.set(key, (listing = toolListing(tools, (tool) => tool)));
  return listing;
}
