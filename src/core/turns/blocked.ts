// Waiting through permission requests and questions: with an `onBlocked` hook (e.g. the MCP server
// asking the human, or a deny policy) each request is handed to it and the wait goes on, so the
// caller never sees `blocked` unless the hook gives the request back. The core stays MCP-free.
import type { PendingRequest } from "../model/pending-request.js";
import type { TurnWatch } from "./watch.js";
import type { TurnWaitOptions, WaitOutcome } from "./watch-wait.js";

/**
 * Answers (or declines to answer) one request. "handled": it was answered, keep waiting;
 * "return": give it back to the caller as `blocked`. `timeoutMs` is what is left of the wait.
 */
export type BlockedHandler = (request: PendingRequest, o: { timeoutMs?: number; signal?: AbortSignal }) => Promise<"handled" | "return">;

export async function waitThrough(watch: TurnWatch, o: TurnWaitOptions & { onBlocked?: BlockedHandler }): Promise<WaitOutcome> {
  const onBlocked = o.onBlocked;
  if (!onBlocked) return watch.wait(o);
  const deadline = o.timeoutMs === undefined ? undefined : Date.now() + o.timeoutMs;
  const left = () => (deadline === undefined ? undefined : Math.max(0, deadline - Date.now()));
  const handled = new Set<string>();
  while (true) {
    const outcome = await watch.wait({ ...o, timeoutMs: left(), returnOnBlocked: true });
    if (outcome !== "blocked") return outcome;
    for (const request of [...watch.pending.values()]) {
      // An answered request seen again means the answer did not land: give it back rather than loop.
      if (handled.has(request.id)) return "blocked";
      // Answered by someone else meanwhile (the web console, another client): the handler stops asking.
      const answered = watch.answeredSignal(request.id);
      const signal = o.signal ? AbortSignal.any([o.signal, answered]) : answered;
      if ((await onBlocked(request, { timeoutMs: left(), signal })) === "return" && !answered.aborted) return "blocked";
      handled.add(request.id);
      watch.pending.delete(request.id); // its `replied` event may still be on the way
    }
  }
}
