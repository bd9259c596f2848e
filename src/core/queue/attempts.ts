// Each start of a task on a worker is an attempt, recorded in Redis by the worker as it happens, so
// a task handed on after its worker stopped answering says so: the next worker marks the attempt it
// takes over `unreachable` as it starts (begin.ts) and first re-attaches to that attempt's session
// (reattach.ts); only when the session is gone, or its server does not answer, does it run the task
// again, and its attempt says why (`rerun`). An attempt that ends records its outcome in the same
// step (outcome-record.ts), so an attempt's row and the task's outcome never disagree.
import type { Redis } from "ioredis";
import type { FleetKeys } from "./names.js";
import { serverId } from "./servers.js";

export type AttemptOutcome = "running" | "finished" | "failed" | "cancelled" | "unreachable";

export interface Attempt {
  n: number;
  worker: string;
  host: string;
  startedAt: string;
  /** The opencode session of this attempt, once it exists (a re-attach: the session it follows). */
  sessionId?: string;
  /** The opencode server the session is on (URL only, never its password). */
  server?: string;
  /** Where it ran: the directory, or the fresh worktree of a repo task. */
  directory?: string;
  /** A repo task's commit its worktree started from (a re-attach collects the patch against it). */
  base?: string;
  /** `reattach`: this attempt followed attempt `of`'s session instead of prompting again. */
  reattach?: { of: number };
  /** Why this attempt started a new session although an earlier one had one (its session gone, its server not answering …). */
  rerun?: string;
  outcome: AttemptOutcome;
  endedAt?: string;
  /** Why it failed or became unreachable, in words. */
  reason?: string;
}

// Fenced: only the task's newest attempt, still running, may record its session. A worker that
// lost its job to another (its lock expired, say in a Redis outage) is refused here, before it
// sends its prompt, so the task's model is never asked twice for one attempt's work.
// KEYS: attempts list, the session's index key. ARGV: n, session id, server URL, server id, retention s.
const RECORD_SESSION = `
local rows = redis.call('LRANGE', KEYS[1], 0, -1)
local n = tonumber(ARGV[1])
if #rows ~= n then return 0 end
local a = cjson.decode(rows[n])
if a.outcome ~= 'running' then return 0 end
a.sessionId = ARGV[2]
a.server = ARGV[3]
redis.call('LSET', KEYS[1], n - 1, cjson.encode(a))
redis.call('SET', KEYS[2], ARGV[4], 'EX', tonumber(ARGV[5]))
return 1
`;

// A running attempt's row changes only while it is still running (a takeover marked it otherwise).
// KEYS: attempts list. ARGV: n, the row.
const UPDATE_RUNNING = `
local row = redis.call('LINDEX', KEYS[1], tonumber(ARGV[1]) - 1)
if not row or cjson.decode(row).outcome ~= 'running' then return 0 end
redis.call('LSET', KEYS[1], tonumber(ARGV[1]) - 1, ARGV[2])
return 1
`;

/** The attempt no longer holds the task: another worker took it over before its session was on record. */
export class AttemptSuperseded extends Error {
  constructor(
    taskId: string,
    n: number,
    /** The session made for nothing (never prompted), if any. */
    readonly sessionId?: string,
  ) {
    super(`Attempt ${n} of task ${taskId} was handed to another worker before its session was on record: it stops before prompting.`);
    this.name = "AttemptSuperseded";
  }
}

export class AttemptLog {
  constructor(
    private readonly redis: Redis,
    private readonly keys: FleetKeys,
    private readonly ttlS: number,
  ) {}

  async list(taskId: string): Promise<Attempt[]> {
    const rows = await this.redis.lrange(this.keys.attempts(taskId), 0, -1);
    return rows.map((r) => JSON.parse(r) as Attempt);
  }

  /** Writes the attempt's row; a running row only while Redis still has it running (false: it was taken over). */
  async update(taskId: string, attempt: Attempt): Promise<boolean> {
    if (attempt.outcome !== "running") {
      await this.redis.lset(this.keys.attempts(taskId), attempt.n - 1, JSON.stringify(attempt));
      return true;
    }
    return (await this.redis.eval(UPDATE_RUNNING, 1, this.keys.attempts(taskId), String(attempt.n), JSON.stringify(attempt))) === 1;
  }

  /** Records the attempt's session (and indexes it to its server) unless the attempt was handed on; throws AttemptSuperseded then. */
  async recordSession(taskId: string, attempt: Attempt, sessionId: string, server: string): Promise<void> {
    const ok = await this.redis.eval(
      RECORD_SESSION,
      2,
      this.keys.attempts(taskId),
      this.keys.session(sessionId),
      String(attempt.n),
      sessionId,
      server,
      serverId(server),
      String(this.ttlS),
    );
    if (ok !== 1) throw new AttemptSuperseded(taskId, attempt.n, sessionId);
    attempt.sessionId = sessionId;
    attempt.server = server;
  }
}
