// Whether an instance is working: the reaper never stops one with a running session.
import { connectV2 } from "../../client/v2/index.js";
import type { Managed } from "./types.js";

/** A session of the instance is busy or retrying (`session.status` lists only those). */
export async function isBusy(m: Managed): Promise<boolean> {
  try {
    const status = m.major === 2 ? await activeV2(m) : await m.client.call("session.status", {}, { timeoutMs: 5_000 });
    m.unanswered = 0;
    return Object.keys(status ?? {}).length > 0;
  } catch {
    // A loaded server can be slow to answer: only one that stays silent is reaped as broken.
    m.unanswered += 1;
    return m.unanswered < 3;
  }
}

/** 2.x: `GET /api/session/active` lists the running sessions (`{data: {ses_…: {type: "running"}}}`). */
async function activeV2(m: Managed): Promise<Record<string, unknown>> {
  const pending = (m.v2 ??= connectV2({ url: m.url, password: m.password }));
  pending.catch(() => (m.v2 = undefined)); // a failed connect is retried at the next check
  const answer = (await (await pending).request("session.active", {}, { timeoutMs: 5_000 })) as { data?: Record<string, unknown> } | undefined;
  return answer?.data ?? {};
}
