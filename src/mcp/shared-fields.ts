// Input fields and helpers several tools share, so their schemas and behaviour stay the same.
import { z } from "zod";
import type { ApprovalMode } from "../config.js";
import type { Conductor } from "../core/conductor.js";
import { approvalHandler } from "./elicit.js";
import type { TurnProgress } from "../core/turns/turn-progress.js";
import type { ToolContext } from "./tool-def.js";

/** Longest a call may hold the client; past it the tool answers `running` and oc_wait picks up. */
export const MAX_TIMEOUT_S = 3000;
export const DEFAULT_TIMEOUT_S = 600;

// Terse on purpose: every client pays for schemas in context. Names that explain themselves carry no
// description; what these shared fields mean is said once, in the server instructions (server.ts).
/** A number that is brought into [min, max] instead of refused: lenient, and its listed schema stays short. */
export function clamped(min: number, max: number, int = false) {
  return (int ? z.number().int() : z.number()).transform((n) => Math.min(max, Math.max(min, n)));
}

export const detailField = z.enum(["final", "summary", "full"]).optional();
export const timeoutField = clamped(1, MAX_TIMEOUT_S).optional();
export const interruptOnCancelField = z.boolean().optional();
export const directoryField = z.string().optional();
// The core refuses an id that is not `ses_…` with a clear error.
export const sessionIdField = z.string();
// Governance (docs/governance.md).
export const approvalsField = z.enum(["elicit", "return", "deny"]).optional();
export const maxTokensField = clamped(0, Infinity).optional();
export const maxCostField = clamped(0, Infinity).optional();
export const requestIdField = z.string().min(1).optional().describe("Idempotency key");

export function timeoutMs(timeout_s: number | undefined): number {
  return Math.min(timeout_s ?? DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S) * 1000;
}

export function progressTo(ctx: ToolContext): (p: TurnProgress) => void {
  return (p) => ctx.progress(p.message);
}

/** After a cancelled wait: optionally stop the agent too. */
export async function afterCancel(ctx: ToolContext, conductor: Conductor, sessionIds: string[], interrupt: boolean | undefined): Promise<void> {
  if (!ctx.signal.aborted || !interrupt) return;
  // Each on the server holding it (a private instance's session lives there).
  await Promise.all(sessionIds.map(async (id) => (await ctx.conductor(id).catch(() => conductor)).interrupt(id).catch(() => undefined)));
}

/** How every waiting tool waits: its timeout and detail, the client's cancel, progress and approval mode. */
export function waitOptions(
  ctx: ToolContext,
  conductor: Conductor,
  args: { timeout_s?: number; detail?: "final" | "summary" | "full"; approvals?: ApprovalMode },
) {
  return {
    timeoutMs: timeoutMs(args.timeout_s),
    detail: args.detail,
    signal: ctx.signal,
    onProgress: progressTo(ctx),
    onBlocked: approvalHandler(ctx, conductor, args.approvals),
  };
}
