// The permission requests and questions an abort leaves behind. Aborting a turn while a sub-agent
// waits on a permission ends the child's loop (its reply `MessageAbortedError`, its session idle),
// yet opencode 1.x keeps listing the request (`GET /permission`), and answering it `once` was seen
// to still run the tool: a cancelled delegation's command, run after the cancel by whoever approves
// what `pending` lists (docs/opencode-behaviour.md §6). opencode says a session is busy while a
// request of its waits (§5), so a request still listed for a session that is idle once the turn
// stopped waits for nothing: it is rejected, and the list says so. 2.x drops them itself (nothing
// is left to reject). Only the stopped session's and its sub-agents' (blocking-requests.ts).
import { NotFoundError } from "../../client/errors.js";
import type { Engine } from "../engine/engine.js";
import { blockingRequests } from "./blocking-requests.js";

/** Rejects the requests of `sessionId` and its descendants that sit in sessions no longer running; their ids. */
export async function rejectLeftRequests(
  engine: Pick<Engine, "listPending" | "getSession" | "runState" | "answerPermission" | "answerQuestion">,
  sessionId: string,
): Promise<string[]> {
  const { requests } = await blockingRequests(engine, [sessionId]);
  const rejected: string[] = [];
  // A session's state read once, however many of its requests are listed.
  const states = new Map<string, Promise<boolean>>();
  const idle = (id: string) =>
    states.get(id) ??
    (states.set(
      id,
      engine.runState(id).then((s) => s.type === "idle"),
    ),
    states.get(id)!);
  for (const request of requests) {
    if (!(await idle(request.sessionId))) continue;
    const answered =
      request.kind === "permission"
        ? engine.answerPermission({ requestId: request.id, sessionId: request.sessionId, decision: "reject" })
        : engine.answerQuestion({ questionId: request.id, sessionId: request.sessionId, reject: true });
    // Answered or gone meanwhile: nothing is left.
    if (
      await answered.then(
        () => true,
        (error: unknown) => (error instanceof NotFoundError ? false : Promise.reject(error)),
      )
    )
      rejected.push(request.id);
  }
  return rejected;
}
