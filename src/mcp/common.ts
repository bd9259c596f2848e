// Input fields and helpers several tools share, so their schemas and behaviour stay the same.
import { z } from "zod";
import type { ApprovalMode } from "../config.js";
import type { Conductor } from "../core/conductor.js";
import { approvalHandler } from "./elicit.js";
import type { TurnProgress } from "../core/turn-watch.js";
import type { ToolContext } from "./tool.js";

/** Longest a call may hold the client; past it the tool answers `running` and oc_wait picks up. */
export const MAX_TIMEOUT_S = 3000;
export const DEFAULT_TIMEOUT_S = 600;

export const detailField = z.enum(["final", "summary", "full"]).optional().describe("final: answer only; full: with transcript");
export const timeoutField = z
  .number()
  .positive()
  .max(MAX_TIMEOUT_S)
  .optional()
  .describe(`Answer "running" after this many seconds (default ${DEFAULT_TIMEOUT_S}); keep it below your client's timeout`);
export const interruptOnCancelField = z.boolean().optional().describe("On cancel, also stop the agent");
export const directoryField = z.string().optional().describe("Project directory (absolute)");
export const sessionIdField = z.string().min(1);
// Governance (docs/governance.md); terse on purpose: every client pays for these in context.
export const approvalsField = z.enum(["elicit", "return", "deny"]).optional().describe("Permission asks: elicit (ask your user; default if supported), return (BLOCKED), deny");
export const maxTokensField = z.number().positive().optional().describe("Token cap; interrupts past it");
export const maxCostField = z.number().positive().optional().describe("USD cap; interrupts past it");
export const requestIdField = z.string().min(1).optional().describe("Idempotency key: a repeat returns the first start");

export function timeoutMs(timeout_s: number | undefined): number {
  return Math.min(timeout_s ?? DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S) * 1000;
}

export function progressTo(ctx: ToolContext): (p: TurnProgress) => void {
  return (p) => ctx.progress(p.message);
}

/** After a cancelled wait: optionally stop the agent too. */
export async function afterCancel(ctx: ToolContext, conductor: Conductor, sessionIds: string[], interrupt: boolean | undefined): Promise<void> {
  if (!ctx.signal.aborted || !interrupt) return;
  await Promise.all(sessionIds.map((id) => conductor.interrupt(id).catch(() => undefined)));
}

/** How every waiting tool waits: its timeout and detail, the client's cancel, progress and approval mode. */
export function waitOptions(ctx: ToolContext, conductor: Conductor, args: { timeout_s?: number; detail?: "final" | "summary" | "full"; approvals?: ApprovalMode }) {
  return {
    timeoutMs: timeoutMs(args.timeout_s),
    detail: args.detail,
    signal: ctx.signal,
    onProgress: progressTo(ctx),
    onBlocked: approvalHandler(ctx, conductor, args.approvals),
  };
}
