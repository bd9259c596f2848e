// opencode's ids as callers pass them. The spec pins their prefixes; a wrong one makes opencode
// answer 500, not 400 (docs/opencode-behaviour.md §3), so each is validated before the HTTP request leaves.
import { quoted, UsageError } from "../errors.js";

/** A session id as opencode makes them: `ses_` and a few dozen base62 characters. */
export const SESSION_ID = /^ses_[0-9A-Za-z]{1,100}$/;

export function isSessionId(value: unknown): value is string {
  return typeof value === "string" && SESSION_ID.test(value);
}

/** `id` if it starts with `<prefix>_`; otherwise a bounded error naming the option (`what`: its library name, e.g. "sessionId"). */
export function validId(id: string | undefined, prefix: "ses" | "msg" | "prt", what: string): string {
  if (typeof id !== "string" || !id.startsWith(`${prefix}_`)) {
    throw new UsageError(
      `\`${what}\` must be an opencode id starting with "${prefix}_", got ${quoted(id)}.${prefix === "ses" ? " List sessions to find one." : ""}`,
      prefix === "ses" ? "sessions" : undefined,
    );
  }
  return id;
}
