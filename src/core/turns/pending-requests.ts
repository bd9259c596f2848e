// The permission requests and questions that block a watched turn (turns/watch.ts), and one abort
// signal per request for whoever asks a person about it: an MCP form stops asking once opencode
// says the request was answered, by whoever. Kept apart from the watch, which only feeds it what
// the events and the server's list say.
import type { PendingRequest } from "../model/pending-request.js";
import type { Engine } from "../engine/engine.js";
import { blockingRequests } from "./blocking-requests.js";

/** The reason a request's answered signal aborts: someone else (another client, the web console) answered it. */
export class AnsweredElsewhere extends Error {
  constructor(readonly requestId: string) {
    super(`request ${requestId} was answered elsewhere`);
    this.name = "AnsweredElsewhere";
  }
}

export class PendingRequests {
  /** The requests asked and not yet answered, by id. */
  readonly open = new Map<string, PendingRequest>();
  /** One per request asked about: aborted when opencode says it was answered (answeredSignal). */
  private readonly replies = new Map<string, AbortController>();

  /** Aborted (reason AnsweredElsewhere) once opencode reports request `id` answered. */
  answeredSignal(id: string): AbortSignal {
    let controller = this.replies.get(id);
    if (!controller) this.replies.set(id, (controller = new AbortController()));
    return controller.signal;
  }

  replied(id: string): void {
    const wasPending = this.open.delete(id);
    let controller = this.replies.get(id);
    // Kept only for this watch's own requests (a later answeredSignal must see it aborted).
    if (!controller && !wasPending) return;
    if (!controller) this.replies.set(id, (controller = new AbortController()));
    if (!controller.signal.aborted) controller.abort(new AnsweredElsewhere(id));
  }

  /**
   * Merges the server's list: drops what was answered, keeps what was asked meanwhile, in `sessions`
   * or in a sub-agent session below them (blocking-requests.ts). Answers the sub-agent sessions
   * found that way, which the caller had not seen created.
   */
  async refresh(engine: Engine, sessions: Iterable<string>): Promise<string[]> {
    const known = new Set(this.open.keys());
    const { requests: open, descendants } = await blockingRequests(engine, sessions);
    const openIds = new Set(open.map((r) => r.id));
    for (const id of known) if (!openIds.has(id)) this.replied(id);
    for (const request of open) this.open.set(request.id, request);
    return descendants;
  }
}
