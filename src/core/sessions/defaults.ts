// The model and agent a session's next turns use when a call names none. opencode has no
// per-session setting for them, so they are remembered by the conductor, in this process only.
import type { CoreContext } from "../context.js";
import { formatModel } from "../catalog/model-resolve.js";
import { resolveModelRef } from "../catalog/models.js";
import { UsageError } from "../errors.js";
import { validId } from "../inputs/ids.js";

export interface SessionDefault {
  sessionId: string;
  model?: string;
  agent?: string;
}

/** Resolves `model` (a name or `provider/model[#variant]`) and keeps it for the session's next turns. */
export async function setSessionModel(ctx: CoreContext, sessionId: string, model: string): Promise<SessionDefault> {
  validId(sessionId, "ses", "sessionId");
  const resolved = formatModel(await resolveModelRef(ctx, model));
  remember(ctx, sessionId, { model: resolved });
  return { sessionId, model: resolved };
}

/** Keeps `agent` for the session's next turns. */
export function setSessionAgent(ctx: CoreContext, sessionId: string, agent: string): SessionDefault {
  validId(sessionId, "ses", "sessionId");
  if (typeof agent !== "string" || !agent.trim()) throw new UsageError("`agent` is empty: name an agent (e.g. build, plan).");
  remember(ctx, sessionId, { agent });
  return { sessionId, agent };
}

function remember(ctx: CoreContext, sessionId: string, value: { model?: string; agent?: string }): void {
  if (!ctx.sessionDefaults) throw new UsageError("This context keeps no session defaults: use a Conductor.");
  ctx.sessionDefaults.set(sessionId, { ...ctx.sessionDefaults.get(sessionId), ...value });
}
