// Whether an instance is working: the reaper never stops one with a running session.
import { binaryOf } from "../engine/binary.js";
import type { Managed } from "./types.js";

/** A session of the instance is busy or retrying (the binary's status route lists only those). */
export async function isBusy(m: Managed): Promise<boolean> {
  try {
    const status = await binaryOf(m.major).activeSessions(m);
    m.unanswered = 0;
    return Object.keys(status ?? {}).length > 0;
  } catch {
    // A loaded server can be slow to answer: only one that stays silent is reaped as broken.
    m.unanswered += 1;
    return m.unanswered < 3;
  }
}
