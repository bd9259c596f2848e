// Idempotent starts for oc_delegate / oc_delegate_parallel: a `request_id` names one start of work.
// Its sessions are recorded (RequestLog, in the state dir) as soon as they exist, so a retried call,
// even after a restart, gets the first call's sessions back instead of starting the work again. In
// this process a duplicate that arrives while the first call is still creating sessions waits for it.
import type { StartRecord } from "../core/governance/request-ids.js";
import { quoted, UsageError } from "../core/errors.js";
import type { ToolContext } from "./tool-def.js";

export type OnSession = (sessionId: string, index: number) => Promise<void>;

const starting = new Map<string, Promise<void>>();

/**
 * Runs `start` (given a callback that records each session) unless `requestId` was seen before; then
 * `replay` gets the recorded start. `expected`: sessions the start creates (the wait ends when all are recorded).
 */
export async function startOnce<T>(
  ctx: ToolContext,
  tool: string,
  requestId: string | undefined,
  expected: number,
  start: (onSession?: OnSession) => Promise<T>,
  replay: (record: StartRecord) => Promise<T>,
): Promise<T> {
  if (requestId === undefined) return start();
  const log = ctx.requests;
  if (!log) throw new UsageError("request_id is not available here (no state dir).");
  const key = `${ctx.config.stateDir}\0${requestId}`;
  while (starting.has(key)) await starting.get(key);
  let recorded!: () => void;
  const claim = new Promise<void>((resolve) => (recorded = resolve));
  starting.set(key, claim);
  const release = () => {
    recorded();
    if (starting.get(key) === claim) starting.delete(key);
  };
  try {
    const record = await log.get(requestId);
    if (record) {
      release();
      if (record.tool !== tool) throw new UsageError(`request_id ${quoted(requestId)} was used for ${record.tool}: give this call a new id.`);
      return await replay(record);
    }
    let seen = 0;
    return await start(async (sessionId, index) => {
      await log.record(requestId, tool, sessionId, index);
      if (++seen >= expected) release();
    });
  } finally {
    release();
  }
}
