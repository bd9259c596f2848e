// A session's model as both majors return it (`{providerID, id, variant}`), in the core's spelling:
// `id` becomes `modelID`, and the default variant is dropped (it is what no variant means).
import type { Session } from "../model/session.js";

export interface ServerModelRef {
  providerID?: string;
  id?: string;
  variant?: string;
}

/** `{ model }` for a session that names one, else nothing (spread into the Session). */
export function sessionModel(m: ServerModelRef | undefined): Pick<Session, "model"> {
  if (!m?.id || !m.providerID) return {};
  return { model: { providerID: m.providerID, modelID: m.id, ...(m.variant && m.variant !== "default" ? { variant: m.variant } : {}) } };
}
