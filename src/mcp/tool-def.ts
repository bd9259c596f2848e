// The shape of one MCP tool: a zod input and output shape, the four annotations, what it declares
// about itself (audit, read-only mode), and a `run` that answers with a short text plus structured data.
import type { PendingRequest } from "../core/model/pending-request.js";
import type { ElicitRequestFormParams, ElicitResult, ToolAnnotations } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { Config, Toolset } from "../config.js";
import type { AuditEntry } from "../core/governance/audit.js";
import type { Conductor } from "../core/conductor.js";
import type { Connection } from "./opencode-connection.js";
import type { Decider, RefusedApproval } from "./refusals.js";
import type { Delegation } from "../core/ledger/view.js";

export type Annotations = Required<Pick<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint">>;

export interface ToolContext {
  /** The connected core (connects on first use); with a session id, the server holding that session. */
  conductor(sessionId?: string): Promise<Conductor>;
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
  /**
   * A 2026-07-28 request whose client declared form elicitation: the requests to ask in an
   * input_required round once the call gives them back (approvals/rounds.ts).
   */
  rounds?: {
    /** Collects the request; false when this call asked it already or gave it back. */
    ask(request: PendingRequest): boolean;
    gaveBack(requestId: string): void;
  };
  /** Approvals not given during this call; the result reports them (refusals.ts). */
  refused?: RefusedApproval[];
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
  /**
   * The audit trail: by default every call of a tool that is not read-only is recorded; `when`
   * decides per call (e.g. oc_api records all but GETs), `detail` adds what the line should say.
   * `changesFiles` (default: every audited call) says whether the call can change files, which
   * OPENCODE_CONDUCTOR_AUDIT_REQUIRED refuses while the trail cannot be written (stopping and
   * refusing never do).
   */
  audit?: {
    when?(args: Record<string, unknown>): boolean;
    detail?(args: Record<string, unknown>): Record<string, unknown>;
    changesFiles?(args: Record<string, unknown>): boolean;
  };
  /**
   * Loads what the tool's calls need and a server's start does not (docs/performance.md,
   * "Start-up"): awaited once before each call is checked, audited or run, so that the sync
   * `audit` decisions may read what it loaded.
   */
  load?(): Promise<unknown>;
  /** Lines of the server instructions about this tool (and its neighbours), shown when it is listed (instructions.ts). */
  guide?: readonly string[];
  /** Listed in read-only mode although not read-only: the tool refuses what writes there itself. */
  readOnlyMode?: "self-checked";
  run(args: z.output<z.ZodObject<I>>, ctx: ToolContext): Promise<ToolAnswer<z.output<z.ZodObject<O>> & Record<string, unknown>>>;
  /**
   * Continues a call that an input_required round stopped (approvals on a 2026-07-28 client), once
   * the answers are in: it waits on the same `sessions` (by task) instead of starting anything.
   * Tools without it simply run again (their run only waits, like oc_wait).
   */
  resume?(
    args: z.output<z.ZodObject<I>>,
    ctx: ToolContext,
    sessions: Array<string | null>,
  ): Promise<ToolAnswer<z.output<z.ZodObject<O>> & Record<string, unknown>>>;
  /**
   * For a client that declared the MCP Tasks extension (tasks/): starts the same work as `run`
   * through `conductor.delegations` and resolves with its handle once the delegation is durable;
   * the work goes on after the call has answered. Only tools that can run long have it.
   */
  task?(args: z.output<z.ZodObject<I>>, ctx: ToolContext): Promise<Delegation>;
}

/** Identity with types: lets each tool file infer its argument types from its own shapes. */
export function defineTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(def: ToolDef<I, O>): ToolDef<I, O> {
  return def;
}
