// One session's details: its row, run state (per directory instance, docs/opencode-behaviour.md §9),
// model, agent, spend and revert point.
import type { Session, SessionRunState } from "../model/session.js";
import type { CoreContext } from "../context.js";
import { type DirectoryOption } from "../context.js";
import { formatModel } from "../catalog/model-resolve.js";
import { validId } from "../inputs/ids.js";
import { engineIn, iso, sessionRow, type SessionRow } from "./rows.js";

export type RunState = "idle" | "busy" | "retry";

export interface SessionDetails extends SessionRow {
  status: RunState;
  /** While opencode waits to retry a failed model call. */
  retry?: { attempt: number; message: string; nextAt: string };
  model?: string;
  agent?: string;
  cost?: number;
  tokens?: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number };
  revert?: { messageId: string; partId?: string };
  shareUrl?: string;
}

export async function sessionInfo(ctx: CoreContext, id: string, options: DirectoryOption = {}): Promise<SessionDetails> {
  const s = await engineIn(ctx, options.directory).getSession(validId(id, "ses", "sessionId"));
  const status = await runState(ctx, s);
  return {
    ...sessionRow(s),
    status: status.type,
    ...(status.type === "retry" ? { retry: { attempt: status.attempt, message: status.message, nextAt: iso(status.next) } } : {}),
    ...(s.model ? { model: formatModel(s.model) } : {}),
    ...(s.agent ? { agent: s.agent } : {}),
    ...(s.cost !== undefined ? { cost: s.cost } : {}),
    ...(s.tokens ? { tokens: s.tokens } : {}),
    ...(s.revert ? { revert: { messageId: s.revert.messageId, ...(s.revert.partId ? { partId: s.revert.partId } : {}) } } : {}),
    ...(s.shareUrl ? { shareUrl: s.shareUrl } : {}),
  };
}

/** The session's run state, read where it lives (1.x keeps it per directory instance). */
export function runState(ctx: CoreContext, s: Session): Promise<SessionRunState> {
  return ctx.engine.withDirectory(s.directory).runState(s.id);
}
