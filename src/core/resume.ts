// resumeDelegation(): follow a delegation whose caller stopped waiting for it and came back, e.g.
// an MCP call that gave an approval to its client (a 2026-07-28 `input_required` round) and was
// sent again with the answer: wait for the session's turn, then run the task's checks as
// delegate() would, each failure sent back into the same session. Nothing new is started: the turn
// is the one delegate() prompted. A budget the first call set keeps watching in the process that
// set it (budget.ts); this one does not start another.
import { send, wait } from "./control.js";
import type { CoreContext } from "./context.js";
import { gate } from "./governance/gate.js";
import type { GovernedSummary, GovernOptions } from "./governance/governed.js";
import { guardedEnv } from "./policy/guard-rails.js";
import { sessionScope } from "./sessions/scope.js";
import type { WaitOptions } from "./turns/turn.js";

export interface ResumeOptions extends WaitOptions, Pick<GovernOptions, "checks" | "maxRounds" | "checkTimeoutMs" | "checkEnv"> {
  /** As the task was delegated: fix rounds use this model and agent, guarded checks run without secrets. */
  model?: string;
  agent?: string;
  guard?: boolean;
}

export async function resumeDelegation(base: CoreContext, sessionId: string, o: ResumeOptions = {}): Promise<GovernedSummary> {
  const deadline = o.timeoutMs === undefined ? undefined : Date.now() + o.timeoutMs;
  const first = await wait(base, sessionId, o);
  if (!o.checks?.length) return first;
  const ctx = await sessionScope(base, sessionId);
  const cwd = ctx.engine.directory ?? (await ctx.engine.getSession(sessionId)).directory;
  const left = () => (deadline === undefined ? undefined : Math.max(0, deadline - Date.now()));
  const env = o.checkEnv ?? (o.guard ? guardedEnv(process.env) : undefined);
  return gate(
    first,
    { checks: o.checks, maxRounds: o.maxRounds, checkTimeoutMs: o.checkTimeoutMs, cwd, env, stop: () => o.signal?.aborted === true },
    (message) => send(base, sessionId, message, { ...o, delivery: "queue", wait: true, timeoutMs: left() }),
  );
}
