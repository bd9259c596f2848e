// Errors of the core that are the caller's to fix (bad input), as opposed to opencode failures.

/**
 * Where a caller looks next to fix an input: the library and the MCP layer each name their own way
 * there (a method, a tool), so core messages never name an MCP tool.
 */
export type NextStep = "models" | "sessions" | "result" | "operations" | "answer" | "pending" | "status";

/** Invalid input: the message says what was wrong and what to do instead. */
export class UsageError extends Error {
  override name = "UsageError";
  constructor(
    message: string,
    readonly next?: NextStep,
  ) {
    super(message);
  }
}

/** A permission or question id opencode does not know in the directory asked: `notFound` is opencode's message. */
export class UnknownRequestError extends UsageError {
  override name = "UnknownRequestError";
  constructor(readonly notFound: string) {
    super(`${notFound}. It may be answered already, or belong to a session in another project directory: pass its sessionId.`);
  }
}

/** Quotes a value the caller gave, at most `max` characters of it: an error must not echo a huge input back. */
export function quoted(value: unknown, max = 200): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  return text.length > max ? `"${text.slice(0, max)}…" (${text.length} characters)` : JSON.stringify(text);
}
