// Turns a tool definition into an SDK registration: arguments checked by name, the answer scrubbed of
// secrets, the call audited as the tool declares. Errors become `isError` results that say what was
// wrong and what to do — never a stack trace.
import type { McpServer, CallToolResult, InputRequiredResult, ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import { OpencodeError } from "../client/errors.js";
import type { Config } from "../config.js";
import type { AuditLog } from "../core/governance/audit.js";
import type { Conductor } from "../core/conductor.js";
import type { Connection } from "./opencode-connection.js";
import { UsageError, type NextStep } from "../core/errors.js";
import { withinBudget, type KeptAnswers } from "./answer-budget.js";
import { auditEntry, isAudited } from "./audit-entry.js";
import { acceptedArguments } from "./client-arguments.js";
import { inToolTerms } from "./field-names.js";
import { askRound, InputRounds, roundStateOf, settleRound, stateMismatch } from "./approvals/rounds.js";
import { declaresFormElicitation, peerOf, type Peer } from "./peer.js";
import { withRefusals } from "./refusals.js";
import { taskHandleResult } from "./tasks/handle-result.js";
import { declaresTasks } from "./tasks/wire.js";
import type { ToolAnswer, ToolContext, ToolDef } from "./tool-def.js";
import { refusedWithoutAudit, withTrailWarnings } from "./trail-guard.js";
import { scrub } from "./scrub.js";
import type { Trail } from "../core/governance/trail-health.js";

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
  /** Files whose failure each answer reports (trail-guard.ts). */
  trails?: Trail[];
  /** Where answers over their budget are kept whole (answer-budget.ts); without it they are not cut. */
  kept?: KeptAnswers;
  /** Told when a call is over (it may have changed what opencode holds). */
  afterCall?(): void;
}

export { scrub };

/** A tool's whole call as the server runs it. */
export type ToolHandler = (args: Record<string, unknown>, request: ServerContext) => Promise<CallToolResult | InputRequiredResult>;

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
    toolHandler(server, def, options),
  );
}

/** The handler of `def`'s calls on `server` (registerTool's, and lazy-tool.ts's once the tool is loaded). */
export function toolHandler(server: McpServer, def: ToolDef, options: RegisterOptions): ToolHandler {
  return async (args, request) => {
    const peer = peerOf(server, request);
    // A call sent again after an input_required round carries its state (verified: server.ts).
    const state = roundStateOf(request);
    const rounds = peer.era === "modern" && declaresFormElicitation(peer.capabilities) ? new InputRounds(state?.returned) : undefined;
    const ctx = toolContext(server, request, options, def.name, peer, rounds);
    ctx.refused!.push(...(state?.refused ?? []));
    const secrets = options.secrets();
    let result: CallToolResult;
    let round: InputRequiredResult | undefined;
    let handle: CallToolResult | undefined;
    let accepted = args;
    try {
      await def.load?.();
      accepted = acceptedArguments(def.name, Object.keys(def.input), args);
      let answer: ToolAnswer<Record<string, unknown>>;
      if (state) {
        const mismatch = stateMismatch(state, def.name, accepted);
        if (mismatch) throw new UsageError(`the requestState sent with this call is not this call's (${mismatch}): send the call without it.`);
        await settleRound(ctx, state, request.mcpReq.inputResponses);
        answer = def.resume ? await def.resume(accepted as never, ctx, state.sessions) : await def.run(accepted as never, ctx);
      } else {
        const refusal = await refusedWithoutAudit(def, accepted, guardOf(options), peer.client);
        // A client that declared the Tasks extension on this request gets a task for work that can run long.
        if (!refusal && def.task && peer.era === "modern" && declaresTasks(peer.capabilities)) {
          handle = taskHandleResult(await def.task(accepted as never, ctx), (text) => scrub(text, secrets));
          answer = { text: (handle.content[0] as { text: string }).text, data: handle.structuredContent as Record<string, unknown> };
        } else answer = refusal ?? (await def.run(accepted as never, ctx));
      }
      // The turn stopped at a request this client can be asked about: ask it instead of answering BLOCKED.
      if (rounds && rounds.asked.length > 0 && blocked(answer.data)) {
        round = await askRound(
          options.config.stateDir,
          { tool: def.name, args: accepted, round: (state?.round ?? 0) + 1, asked: rounds.asked, sessions: sessionsOf(answer.data), rounds, ctx },
          (text) => scrub(text, secrets),
        );
      }
      result = handle ?? {
        content: [{ type: "text", text: scrub(answer.text, secrets) }],
        structuredContent: JSON.parse(scrub(JSON.stringify(answer.data), secrets)),
        ...(answer.isError ? { isError: true } : {}),
      };
    } catch (error) {
      result = errorResult(error, def.name, secrets);
    }
    result = withRefusals(result, JSON.parse(scrub(JSON.stringify(ctx.refused ?? []), secrets)));
    if (options.audit && isAudited(def, accepted)) {
      const error = result.isError ? (result.content[0] as { text?: string } | undefined)?.text : undefined;
      const data = result.structuredContent as Record<string, unknown> | undefined;
      const entry = auditEntry(def, accepted, { data, isError: result.isError === true, error }, peer.client);
      // Each round is a call of its own: say which answered input_required, and which resumed one.
      const rounded = round
        ? { ...entry, outcome: "input_required", detail: { ...entry.detail, asked: requestIds(round) } }
        : handle
          ? { ...entry, outcome: "task", detail: { ...entry.detail, task_id: (handle.structuredContent as { task_id: string }).task_id } }
          : state
            ? { ...entry, detail: { ...entry.detail, resumed_round: state.round } }
            : entry;
      await options.audit.append(JSON.parse(scrub(JSON.stringify(rounded), secrets)));
    }
    if (options.trails) result = withTrailWarnings(result, options.trails, options.config);
    options.afterCall?.();
    // Audited whole; the caller gets what fits its budget, and a link to the rest.
    return round ?? (options.kept ? withinBudget(result, def.name, options.kept) : result);
  };
}

/** Whether the call ended waiting for an answer (the one task, or any task of a batch). */
function blocked(data: Record<string, unknown>): boolean {
  if (data.status === "blocked") return true;
  return Array.isArray(data.results) && data.results.some((r) => (r as { status?: unknown }).status === "blocked");
}

/** The sessions the call waited on, by task. */
function sessionsOf(data: Record<string, unknown>): Array<string | null> {
  if (typeof data.session_id === "string") return [data.session_id];
  if (!Array.isArray(data.results)) return [];
  return data.results.map((r) => {
    const id = (r as { session_id?: unknown }).session_id;
    return typeof id === "string" ? id : null;
  });
}

const guardOf = (options: RegisterOptions) => ({
  config: options.config,
  audit: options.audit,
  prepare: <T>(entry: T): T => JSON.parse(scrub(JSON.stringify(entry), options.secrets())) as T,
});

const requestIds = (round: InputRequiredResult) => Object.keys(round.inputRequests ?? {});

function toolContext(server: McpServer, request: ServerContext, options: RegisterOptions, tool: string, peer: Peer, rounds?: InputRounds): ToolContext {
  const token = request.mcpReq._meta?.progressToken;
  let step = 0;
  return {
    conductor: options.conductor,
    connection: options.connection,
    otherServers: options.otherServers,
    config: options.config,
    signal: request.mcpReq.signal,
    refused: [],
    ...(rounds ? { rounds } : {}),
    // A 2026-07-28 request has no server-to-client requests: its approvals come back as BLOCKED.
    canElicit: () => peer.era === "legacy" && declaresFormElicitation(peer.capabilities),
    elicit(params, o = {}) {
      const message = scrub(params.message, options.secrets());
      // Related to this call, so the HTTP transport sends it on the call's own stream.
      return request.mcpReq.elicitInput({ ...params, message }, { signal: o.signal, timeout: Math.max(1_000, o.timeoutMs ?? MAX_ELICIT_MS) });
    },
    async audit(entry) {
      if (!options.audit) return;
      await options.audit.append(JSON.parse(scrub(JSON.stringify({ tool, ...(peer.client ? { client: peer.client } : {}), ...entry }), options.secrets())));
    },
    progress(message) {
      if (token === undefined) return;
      step += 1;
      void request.mcpReq
        .notify({ method: "notifications/progress", params: { progressToken: token, progress: step, message: scrub(message, options.secrets()) } })
        .catch(() => undefined);
    },
    log(level, message) {
      void request.mcpReq.log(level, scrub(message, options.secrets()), "opencode-conductor").catch(() => undefined);
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
