// A caller's timeout is a promise: the answer comes within it plus ANSWER_MARGIN_MS, whatever the
// server does. The wait for the turn ends at the timeout; the reads that make up the answer (the
// summary, pending requests, the session's directory) get what is left until the answer is owed,
// instead of the client's 30 s default. A read that has not answered by then ends as NoAnswerError,
// which the callers turn into an `unreachable` answer that keeps the session id.
import { ConnectionError, safeUrl } from "../../client/errors.js";

/** Time after a wait's timeout for the reads that answer; the documented bound is timeout + 2 s, and the
 * tool's own work after the reads took up to 0.6 s under a loaded CI run (1.5 s here answered at 12.1 s for 10 s). */
export const ANSWER_MARGIN_MS = 1_000;

/** opencode did not answer a read before the caller's answer was owed. */
export class NoAnswerError extends Error {
  override name = "NoAnswerError";
  constructor(readonly what: string) {
    super(`no answer to ${what} before the caller's timeout`);
  }
}

/** A read that failed because opencode did not answer (no connection, a timeout, or no time left). */
export function isNoAnswer(error: unknown): error is NoAnswerError | ConnectionError {
  return error instanceof NoAnswerError || error instanceof ConnectionError;
}

export class Deadline {
  /** The wait may last `timeoutMs` from now (undefined: no limit). */
  static after(timeoutMs: number | undefined): Deadline {
    return new Deadline(timeoutMs === undefined ? undefined : Date.now() + timeoutMs);
  }

  private constructor(private readonly end: number | undefined) {}

  /** What is left of the wait (ms; undefined: no limit). */
  get waitMs(): number | undefined {
    return this.end === undefined ? undefined : Math.max(0, this.end - Date.now());
  }

  /** What is left for reads: until the answer is owed. */
  get readMs(): number | undefined {
    return this.end === undefined ? undefined : Math.max(0, this.end + ANSWER_MARGIN_MS - Date.now());
  }

  /**
   * Settles as `promise` does, or rejects with NoAnswerError once the answer is owed. The read
   * itself goes on (its own timeout ends it); what it answers later goes to `dispose`, if given.
   */
  read<T>(promise: Promise<T>, what: string, dispose?: (late: T) => void): Promise<T> {
    const ms = this.readMs;
    if (ms === undefined) return promise;
    return new Promise<T>((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => ((late = true), reject(new NoAnswerError(what))), ms);
      promise.then(
        (value) => (late ? dispose?.(value) : (clearTimeout(timer), resolve(value))),
        (error: unknown) => (late ? undefined : (clearTimeout(timer), reject(error))),
      );
    });
  }
}

/** What an `unreachable` answer says: what did not answer, and that the outcome may still come. */
export function unreachableMessage(url: string, error: NoAnswerError | ConnectionError): string {
  const lead =
    error instanceof NoAnswerError
      ? `opencode at ${safeUrl(url)} gave ${error.message}`
      : `opencode at ${safeUrl(url)} could not be read (${error.operationId ?? "a request"}: ${error.reason === "timeout" ? "no answer in time" : "no connection"})`;
  return `${lead}. The turn's outcome is unknown and may still come: ask again with the session id; do not send the task again until opencode answers.`;
}
