// The times the audit trail is filtered by (`since` / `until`): an ISO date or time, or an age
// ("30m": that long ago). Anything else is refused: Date.parse reads loose strings ("1", "March")
// and an unparsed time would silently filter nothing.
import { quoted, UsageError } from "../errors.js";

const AGE_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const ISO = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

export const AUDIT_TIME_FORMATS = "an ISO date or time (2026-11-29, 2026-11-29T18:00:00Z) or an age (30m, 2h, 7d: that long ago)";

/** Epoch ms of `value` (epoch ms pass through); `label` names the input in the error. */
export function auditTime(label: string, value: string | number, now = Date.now()): number {
  if (typeof value === "number") {
    if (Number.isFinite(value)) return value;
  } else {
    const text = value.trim();
    const age = /^(\d+)([smhd])$/.exec(text);
    if (age) return now - Number(age[1]) * AGE_MS[age[2]!]!;
    const at = ISO.test(text) ? Date.parse(text) : NaN;
    if (!Number.isNaN(at)) return at;
  }
  throw new UsageError(`${label} ${quoted(value)} is not a time: give ${AUDIT_TIME_FORMATS}.`);
}
