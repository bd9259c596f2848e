// Turns a tool definition into an SDK registration: arguments checked by name, the answer scrubbed of
// secrets, the call audited as the tool declares. Errors become `isError` results that say what was
// wrong and what to do — never a stack trace.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { OpencodeError } from "../client/errors.js";
import type { Config } from "../config.js";
import type { AuditLog } from "../core/governance/audit.js";
import type { Conductor } from "../core/conductor.js";
import type { Connection } from "./connection.js";
import { UsageError, type NextStep } from "../core/errors.js";
import type { RequestLog } from "../core/governance/request-ids.js";
import type { TaskRecords } from "../core/governance/task-records.js";
import { auditEntry, isAudited } from "./audit-entry.js";
import { acceptedArguments } from "./client-arguments.js";
import { inToolTerms } from "./field-names.js";
import { withRefusals } from "./refusals.js";
import type { ToolContext, ToolDef } from "./tool-def.js";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** How long a person may take over an approval form when the wait has no limit. */
const MAX_ELICIT_MS = 3_600_000;

export interface RegisterOptions {
  config: Config;
  conductor(sessionId?: string): Promise<Conductor>;
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
    {
      title: def.title,
      description: def.description,
      inputSchema: z.looseObject(def.input),
      outputSchema: z.looseObject(def.output),
      annotations: def.annotations,
    },
    async (args: Record<string, unknown>, extra: Extra): Promise<CallToolResult> => {
      const ctx = toolContext(server, extra, options, def.name);
      let result: CallToolResult;
      let accepted = args;
      try {
        accepted = acceptedArguments(def.name, Object.keys(def.input), args);
        const answer = await def.run(accepted as never, ctx);
        const text = scrub(answer.text, options.secrets());
        result = {
          content: [{ type: "text", text }],
          structuredContent: JSON.parse(scrub(JSON.stringify(answer.data), options.secrets())),
          ...(answer.isError ? { isError: true } : {}),
        };
      } catch (error) {
        result = errorResult(error, def.name, options.secrets());
      }
      result = withRefusals(result, JSON.parse(scrub(JSON.stringify(ctx.refused ?? []), options.secrets())));
      if (options.audit && isAudited(def, accepted)) {
        const error = result.isError ? (result.content[0] as { text?: string } | undefined)?.text : undefined;
        const peer = server.server.getClientVersion();
        const entry = auditEntry(
          def,
          accepted,
          { data: result.structuredContent, isError: result.isError === true, error },
          peer && { name: peer.name, version: peer.version },
        );
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
      return server.server.elicitInput(
        { ...params, message },
        { relatedRequestId: extra.requestId, signal: o.signal, timeout: Math.max(1_000, o.timeoutMs ?? MAX_ELICIT_MS) },
      );
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

/** The tool that shows what a core error's `next` step points at. */
const NEXT_TOOL: Record<NextStep, string> = {
  models: "oc_models",
  sessions: "oc_sessions",
  result: "oc_result",
  operations: "oc_api_ops",
  answer: "oc_answer",
  pending: "oc_pending",
  status: "oc_status",
};

function describeError(error: unknown, tool: string): string {
  if (error instanceof UsageError) return `Invalid input to ${tool}: ${inToolTerms(error.message)}${error.next ? ` Next: ${NEXT_TOOL[error.next]}.` : ""}`;
  if (error instanceof OpencodeError) return `opencode error (${error.name}): ${error.message}`;
  if (error instanceof Error) return `${tool} failed: ${error.message}`;
  return `${tool} failed: ${String(error)}`;
}

export function scrub(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join("[redacted]");
  return out;
}
