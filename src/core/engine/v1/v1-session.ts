// A session as opencode 1.x returns it (`Schemas["Session"]`), in the core's engine shape: ids
// renamed to the core's spelling, optional fields only when present, the default variant dropped.
import type { Session } from "../../model/session.js";
import type { Schemas } from "../../../client/types.js";
import { sessionModel } from "../session-model.js";

export function sessionOfV1(s: Schemas["Session"]): Session {
  return {
    id: s.id,
    title: s.title,
    directory: s.directory,
    ...(s.parentID ? { parentId: s.parentID } : {}),
    time: { created: s.time.created, updated: s.time.updated, ...(s.time.archived ? { archived: s.time.archived } : {}) },
    ...sessionModel(s.model),
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
