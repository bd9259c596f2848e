// Errors of the core that are the caller's to fix (bad input), as opposed to opencode failures.

/** Invalid input: the message says what was wrong and what to do instead. */
export class UsageError extends Error {
  override name = "UsageError";
}
