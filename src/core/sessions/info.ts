// One session's details: its row, run state (per directory instance, docs/opencode-behaviour.md §9),
// model, agent, spend and revert point.
import type { Schemas } from "../../client/types.js";
import type { CoreContext } from "../context.js";
import { type DirectoryOption } from "../context.js";
import { formatModel } from "../catalog/model-resolve.js";
import { checkId } from "../inputs/ids.js";
import { iso, opts, sessionRow, type Session, type SessionRow } from "./rows.js";

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
  const s = await ctx.client.call("session.get", { path: { sessionID: checkId(id, "ses", "sessionId") } }, opts(options.directory));
  const status = await runState(ctx, s);
  return {
    ...sessionRow(s),
    status: status.type,
    ...(status.type === "retry" ? { retry: { attempt: status.attempt, message: status.message, nextAt: iso(status.next) } } : {}),
    ...(s.model ? { model: formatModel({ providerID: s.model.providerID, modelID: s.model.id, variant: s.model.variant === "default" ? undefined : s.model.variant }) } : {}),
    ...(s.agent ? { agent: s.agent } : {}),
    ...(s.cost !== undefined ? { cost: s.cost } : {}),
    ...(s.tokens
      ? { tokens: { input: s.tokens.input, output: s.tokens.output, reasoning: s.tokens.reasoning, cacheRead: s.tokens.cache.read, cacheWrite: s.tokens.cache.write } }
      : {}),
    ...(s.revert ? { revert: { messageId: s.revert.messageID, ...(s.revert.partID ? { partId: s.revert.partID } : {}) } } : {}),
    ...(s.share ? { shareUrl: s.share.url } : {}),
  };
}

/** `session.status` lists only non-idle sessions of one directory instance: absent means idle. */
export async function runState(ctx: CoreContext, s: Session): Promise<Schemas["SessionStatus"]> {
  const statuses = await ctx.client.call("session.status", {}, { directory: s.directory });
  return statuses[s.id] ?? { type: "idle" };
}
