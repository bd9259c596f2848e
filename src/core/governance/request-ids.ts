// Idempotent starts: a `request_id` names one start of work. The sessions it started are kept in
// the state dir (so a retried call finds them even after a restart) and a repeat returns them
// instead of starting the work again.
import { join } from "node:path";
import { ensureStateDir, readJson, writeJsonAtomic } from "../state-dir.js";

export interface StartRecord {
  requestId: string;
  tool: string;
  /** Sessions of the start, in task order (one for oc_delegate). */
  sessionIds: string[];
  startedAt: string;
}

const MAX_RECORDS = 5_000;

export class RequestLog {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly stateDir: string) {}

  private get path(): string {
    return join(this.stateDir, "requests.json");
  }

  async get(requestId: string): Promise<StartRecord | undefined> {
    await this.queue.catch(() => undefined);
    const records = await readJson<Record<string, StartRecord>>(this.path, {});
    return records[requestId];
  }

  /** Records (or extends) the sessions of a start; writes are serialised in this process. */
  record(requestId: string, tool: string, sessionId: string, index = 0): Promise<void> {
    const write = this.queue.then(async () => {
      await ensureStateDir(this.stateDir);
      const records = await readJson<Record<string, StartRecord>>(this.path, {});
      const record = records[requestId] ?? { requestId, tool, sessionIds: [], startedAt: new Date().toISOString() };
      record.sessionIds[index] = sessionId;
      records[requestId] = record;
      await writeJsonAtomic(this.path, prune(records));
    });
    this.queue = write.catch(() => undefined);
    return write;
  }
}

/** Keeps the newest records only, so the file cannot grow without bound. */
function prune(records: Record<string, StartRecord>): Record<string, StartRecord> {
  const entries = Object.entries(records);
  if (entries.length <= MAX_RECORDS) return records;
  entries.sort((a, b) => a[1].startedAt.localeCompare(b[1].startedAt));
  return Object.fromEntries(entries.slice(-MAX_RECORDS));
}
