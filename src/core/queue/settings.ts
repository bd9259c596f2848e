// How the queue backend is configured: a Redis URL (OPENCODE_CONDUCTOR_QUEUE or `queue: { url }`),
// the key prefix shared by every caller and worker of one fleet, and how long finished tasks stay.
import { quoted, UsageError } from "../errors.js";

export interface QueueSettings {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS). */
  url: string;
  /** Redis key prefix of the fleet (default `occ`): callers and workers must agree on it. */
  prefix?: string;
  /** Seconds a finished task (its result and attempts) stays readable (default 7 days). */
  ttlS?: number;
}

export const DEFAULT_TTL_S = 7 * 24 * 3600;
export const DEFAULT_PREFIX = "occ";

/** The queue settings from the environment, or undefined when no queue is configured (in-process work). */
export function queueSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): QueueSettings | undefined {
  const url = env.OPENCODE_CONDUCTOR_QUEUE?.trim();
  if (!url) return undefined;
  const ttl = env.OPENCODE_CONDUCTOR_QUEUE_TTL_S?.trim();
  return validSettings({ url, prefix: env.OPENCODE_CONDUCTOR_QUEUE_PREFIX?.trim() || undefined, ttlS: ttl ? Number(ttl) : undefined });
}

export function validSettings(s: QueueSettings): Required<QueueSettings> {
  let parsed: URL | undefined;
  try {
    parsed = new URL(s.url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:")) {
    throw new UsageError(`The queue URL ${quoted(redacted(s.url))} is not a redis:// or rediss:// URL (e.g. redis://127.0.0.1:6379).`);
  }
  const ttlS = s.ttlS ?? DEFAULT_TTL_S;
  if (!Number.isFinite(ttlS) || ttlS < 60) throw new UsageError(`The queue's retention must be at least 60 seconds (got ${quoted(String(s.ttlS))}).`);
  const prefix = s.prefix ?? DEFAULT_PREFIX;
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(prefix)) throw new UsageError(`The queue prefix ${quoted(prefix)} may only hold letters, digits, _ and - (at most 40).`);
  return { url: s.url, prefix, ttlS };
}

/** The URL without its password, for messages and oc_status. */
export function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//***@");
  }
}
