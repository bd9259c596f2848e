// A session as opencode 1.x returns it (`Schemas["Session"]`), in the core's engine shape: ids
// renamed to the core's spelling, optional fields only when present, the default variant dropped.
import type { Schemas } from "../../client/types.js";
import type { EngineSession } from "./engine.js";

export function sessionOfV1(s: Schemas["Session"]): EngineSession {
  return {
    id: s.id,
    title: s.title,
    directory: s.directory,
    ...(s.parentID ? { parentId: s.parentID } : {}),
    time: { created: s.time.created, updated: s.time.updated, ...(s.time.archived ? { archived: s.time.archived } : {}) },
    ...(s.model
      ? {
          model: {
            providerID: s.model.providerID,
            modelID: s.model.id,
            ...(s.model.variant && s.model.variant !== "default" ? { variant: s.model.variant } : {}),
          },
        }
      : {}),
    ...(s.agent ? { agent: s.agent } : {}),
    ...(s.cost !== undefined ? { cost: s.cost } : {}),
    ...(s.tokens
      ? {
          tokens: {
            input: s.tokens.input,
            output: s.tokens.output,
            reasoning: s.tokens.reasoning,
            cacheRead: s.tokens.cache.read,
            cacheWrite: s.tokens.cache.write,
          },
        }
      : {}),
    ...(s.revert
      ? {
          revert: { messageId: s.revert.messageID, ...(s.revert.partID ? { partId: s.revert.partID } : {}), ...(s.revert.diff ? { diff: s.revert.diff } : {}) },
        }
      : {}),
    ...(s.share ? { shareUrl: s.share.url } : {}),
  };
}
