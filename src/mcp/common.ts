// Input fields and helpers several tools share, so their schemas and behaviour stay the same.
import { z } from "zod";
import type { Conductor } from "../core/conductor.js";
import type { TurnProgress } from "../core/turn-watch.js";
import type { ToolContext } from "./tool.js";

/** Longest a call may hold the client; past it the tool answers `running` and oc_wait picks up. */
export const MAX_TIMEOUT_S = 3000;
export const DEFAULT_TIMEOUT_S = 600;

export const detailField = z.enum(["final", "summary", "full"]).optional().describe("final: answer only; summary (default): answer, tools, files, tokens; full: plus the turn's transcript");
export const timeoutField = z
  .number()
  .positive()
  .max(MAX_TIMEOUT_S)
  .optional()
  .describe(`Seconds to wait before answering "running" with the session id (default ${DEFAULT_TIMEOUT_S}); the work goes on, oc_wait resumes it. Set it below your client's tool timeout.`);
export const interruptOnCancelField = z.boolean().optional().describe("If the call is cancelled, also stop the agent (default: it keeps working)");
export const directoryField = z.string().optional().describe("Absolute path of the project directory");
export const sessionIdField = z.string().min(1).describe("Session id (ses_...)");

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
