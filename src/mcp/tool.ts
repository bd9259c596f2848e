// The shape of one MCP tool and the glue that turns it into an SDK registration: a zod input and
// output shape, the four annotations, and a `run` that answers with a short text plus structured data.
// Errors become `isError` results that say what was wrong and what to do — never a stack trace.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ElicitRequestFormParams, ElicitResult, ServerNotification, ServerRequest, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { OpencodeError } from "../client/errors.js";
import type { Config, Toolset } from "../config.js";
import type { AuditEntry, AuditLog } from "../core/governance/audit.js";
import type { Conductor } from "../core/conductor.js";
import type { Connection, InstanceLease } from "./connection.js";
import { UsageError } from "../core/errors.js";
import type { RequestLog } from "../core/governance/request-ids.js";
import type { TaskRecords } from "../core/governance/task-records.js";
import { auditEntry, isAudited } from "./audit-entry.js";
import { acceptedArguments } from "./client-arguments.js";
import { withRefusals, type Decider, type RefusedApproval } from "./refusals.js";

export type Annotations = Required<Pick<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint">>;

export interface ToolContext {
  /** The connected core (connects on first use); with a session id, the server holding that session. */
  conductor(sessionId?: string): Promise<Conductor>;
  /** A private opencode instance for a directory (`isolation: "instance"`). */
  instance?(directory: string): Promise<InstanceLease>;
  /** How the connection to opencode was found (for oc_status). */
  connection?(): ReturnType<Connection["describe"]>;
  /** Other opencode servers running on this machine that accept our password. */
  otherServers?(): Promise<Conductor[]>;
  config: Config;
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
  /** Sends `notifications/progress` when the client asked for it; otherwise does nothing. */
  progress(message: string): void;
  log(level: "debug" | "info" | "warning" | "error", message: string): void;
  /** Whether the client declared form elicitation (it can ask its user). */
  canElicit?(): boolean;
  /** Asks the client's user (`elicitation/create`); rejects on timeout, cancel or a client error. */
  elicit?(params: ElicitRequestFormParams, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<ElicitResult>;
  /** Appends an extra audit line for this call (e.g. an approval the human gave); tool and client are filled in. */
  audit?(entry: Omit<AuditEntry, "time" | "tool" | "client" | "by"> & { by?: AuditEntry["by"] | Decider }): Promise<void>;
  /** Approvals not given during this call; the result reports them (refusals.ts). */
  refused?: RefusedApproval[];
  /** Idempotent starts (request_id), kept in the state dir. */
  requests?: RequestLog;
  /** What the web console reads about each task started (task-records.ts). */
  tasks?: TaskRecords;
}

export interface ToolAnswer<O> {
  text: string;
  data: O;
  isError?: boolean;
}

export interface ToolDef<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  toolset: Toolset;
  annotations: Annotations;
  input: I;
  output: O;
  /** `data` has the output shape's fields and may carry more (the output schema is loose). */
  run(args: z.output<z.ZodObject<I>>, ctx: ToolContext): Promise<ToolAnswer<z.output<z.ZodObject<O>> & Record<string, unknown>>>;
}

/** Identity with types: lets each tool file infer its argument types from its own shapes. */
export function defineTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(def: ToolDef<I, O>): ToolDef<I, O> {
  return def;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** How long a person may take over an approval form when the wait has no limit. */
const MAX_ELICIT_MS = 3_600_000;

export interface RegisterOptions {
  config: Config;
  conductor(sessionId?: string): Promise<Conductor>;
  instance?(directory: string): Promise<InstanceLease>;
  connection?(): ReturnType<Connection["describe"]>;
  otherServers?(): Promise<Conductor[]>;
  /** Values that must never appear in an answer (passwords, tokens). */
  secrets: () => string[];
  /** Where calls that change something are recorded. */
  audit?: AuditLog;
  requests?: RequestLog;
  tasks?: TaskRecords;
}

export function registerTool(server: McpServer, def: ToolDef, options: RegisterOptions): void {
  server.registerTool(
    def.name,
    // Output schemas name the fields a caller relies on; answers may carry more (loose objects). The
    // input is loose too, so that an unknown argument gets a clear error below instead of being dropped
    // (client-arguments.ts: the few keys clients inject on their own are dropped instead).
    { title: def.title, description: def.description, inputSchema: z.looseObject(def.input), outputSchema: z.looseObject(def.output), annotations: def.annotations },
    async (args: Record<string, unknown>, extra: Extra): Promise<CallToolResult> => {
      const ctx = toolContext(server, extra, options, def.name);
      let result: CallToolResult;
      let accepted = args;
      try {
        accepted = acceptedArguments(def.name, Object.keys(def.input), args);
        const answer = await def.run(accepted as never, ctx);
        const text = scrub(answer.text, options.secrets());
        result = { content: [{ type: "text", text }], structuredContent: JSON.parse(scrub(JSON.stringify(answer.data), options.secrets())), ...(answer.isError ? { isError: true } : {}) };
      } catch (error) {
        result = errorResult(error, def.name, options.secrets());
      }
      result = withRefusals(result, JSON.parse(scrub(JSON.stringify(ctx.refused ?? []), options.secrets())));
      if (options.audit && isAudited(def, accepted)) {
        const error = result.isError ? (result.content[0] as { text?: string } | undefined)?.text : undefined;
        const peer = server.server.getClientVersion();
        const entry = auditEntry(def, accepted, { data: result.structuredContent, isError: result.isError === true, error }, peer && { name: peer.name, version: peer.version });
        await options.audit.append(JSON.parse(scrub(JSON.stringify(entry), options.secrets())));
      }
      return result;
    },
  );
}

function toolContext(server: McpServer, extra: Extra, options: RegisterOptions, tool: string): ToolContext {
  const token = extra._meta?.progressToken;
  let step = 0;
  const peer = () => {
    const v = server.server.getClientVersion();
    return v && { client: { name: v.name, version: v.version } };
  };
  return {
    conductor: options.conductor,
    instance: options.instance,
    connection: options.connection,
    otherServers: options.otherServers,
    config: options.config,
    signal: extra.signal,
    requests: options.requests,
    tasks: options.tasks,
    refused: [],
    canElicit: () => server.server.getClientCapabilities()?.elicitation?.form !== undefined,
    elicit(params, o = {}) {
      const message = scrub(params.message, options.secrets());
      // Related to this call, so the HTTP transport sends it on the call's own stream.
      return server.server.elicitInput({ ...params, message }, { relatedRequestId: extra.requestId, signal: o.signal, timeout: Math.max(1_000, o.timeoutMs ?? MAX_ELICIT_MS) });
    },
    async audit(entry) {
      if (!options.audit) return;
      await options.audit.append(JSON.parse(scrub(JSON.stringify({ tool, ...peer(), ...entry }), options.secrets())));
    },
    progress(message) {
      if (token === undefined) return;
      step += 1;
      void extra
        .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: step, message: scrub(message, options.secrets()) } })
        .catch(() => undefined);
    },
    log(level, message) {
      void server.sendLoggingMessage({ level, logger: "opencode-conductor", data: scrub(message, options.secrets()) }).catch(() => undefined);
    },
  };
}

/** A failed call as the model should see it: what went wrong and what to do next. */
export function errorResult(error: unknown, tool: string, secrets: string[]): CallToolResult {
  const message = scrub(describeError(error, tool), secrets);
  return { content: [{ type: "text", text: message }], isError: true };
}

function describeError(error: unknown, tool: string): string {
  if (error instanceof UsageError) return `Invalid input to ${tool}: ${error.message}`;
  if (error instanceof OpencodeError) return `opencode error (${error.name}): ${error.message}`;
  if (error instanceof Error) return `${tool} failed: ${error.message}`;
  return `${tool} failed: ${String(error)}`;
}

export function scrub(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join("[redacted]");
  return out;
}
