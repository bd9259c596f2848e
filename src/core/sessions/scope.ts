// Session status is kept per directory instance (docs/opencode-behaviour.md §9): a session living in another project
// must be read through an engine bound to that project's directory.
import type { CoreContext } from "../context.js";
import { validId } from "../inputs/ids.js";

export async function sessionScope(ctx: CoreContext, sessionId: string): Promise<CoreContext> {
  validId(sessionId, "ses", "sessionId");
  const session = await ctx.engine.getSession(sessionId);
  return session.directory === ctx.engine.directory ? ctx : { ...ctx, engine: ctx.engine.withDirectory(session.directory) };
}
