// Errors of the core that are the caller's to fix (bad input), as opposed to opencode failures.

/** Invalid input: the message says what was wrong and what to do instead. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Quotes a value the caller gave, at most `max` characters of it: an error must not echo a huge input back. */
export function quoted(value: unknown, max = 200): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  return text.length > max ? `"${text.slice(0, max)}…" (${text.length} characters)` : JSON.stringify(text);
}
