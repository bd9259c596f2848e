// Where ledger records live: the state dir (file-store.ts), Redis when the queue is on
// (queue/ledger-store.ts), or this process's memory when the conductor has neither. Each store
// makes one promise the ledger rests on: a request id names at most one record, for every process
// that shares the store.
import type { LedgerRecord } from "./record.js";

export interface LedgerStore {
  /**
   * Stores `record`, unless its request id already names a record: then that one comes back,
   * untouched (`created: false`). Atomic for every process sharing the store.
   */
  create(record: LedgerRecord): Promise<{ record: LedgerRecord; created: boolean }>;
  get(id: string): Promise<LedgerRecord | undefined>;
  /** A read-modify-write of one record (`change` returns the new record, or undefined to leave it). */
  update(id: string, change: (record: LedgerRecord) => LedgerRecord | undefined): Promise<LedgerRecord | undefined>;
  /** Forgets the record and frees its request id (a start that failed before any session). */
  remove(record: LedgerRecord): Promise<void>;
  /** The newest records first. */
  list(limit: number): Promise<LedgerRecord[]>;
  /** How long a record stays readable after its end, in ms. */
  readonly retentionMs: number;
}

/** A record may be dropped: its end is older than the retention, or it never ended and is older than `maxOpenMs`. */
export function expired(record: LedgerRecord, retentionMs: number, now = Date.now()): boolean {
  if (record.end) return Date.parse(record.end.at) + retentionMs < now;
  return Date.parse(record.createdAt) + Math.max(retentionMs, MAX_OPEN_MS) < now;
}

/** A record that never ended (its owner died, nobody read it) is dropped after this long. */
export const MAX_OPEN_MS = 7 * 24 * 3600_000;

/** How long a record stays after its end when the store sets no other retention. */
export const DEFAULT_RETENTION_MS = 24 * 3600_000;

/** Records a memory store keeps at most (a worker runs one delegation per job); the oldest go first. */
const MAX_MEMORY_RECORDS = 1_000;

/** In this process only: request ids de-duplicate within it, nothing survives a restart. */
export class MemoryLedgerStore implements LedgerStore {
  private readonly records = new Map<string, LedgerRecord>();
  private readonly byRequest = new Map<string, string>();

  constructor(readonly retentionMs = DEFAULT_RETENTION_MS) {}

  async create(record: LedgerRecord): Promise<{ record: LedgerRecord; created: boolean }> {
    this.prune();
    const held = record.requestId === undefined ? undefined : this.records.get(this.byRequest.get(record.requestId) ?? "");
    if (held) return { record: structuredClone(held), created: false };
    this.records.set(record.id, structuredClone(record));
    if (record.requestId !== undefined) this.byRequest.set(record.requestId, record.id);
    return { record, created: true };
  }

  async get(id: string): Promise<LedgerRecord | undefined> {
    const record = this.records.get(id);
    return record && structuredClone(record);
  }

  async update(id: string, change: (record: LedgerRecord) => LedgerRecord | undefined): Promise<LedgerRecord | undefined> {
    const current = this.records.get(id);
    if (!current) return undefined;
    const next = change(structuredClone(current));
    if (!next) return structuredClone(current);
    this.records.set(id, structuredClone(next));
    return next;
  }

  async remove(record: LedgerRecord): Promise<void> {
    this.records.delete(record.id);
    if (record.requestId !== undefined && this.byRequest.get(record.requestId) === record.id) this.byRequest.delete(record.requestId);
  }

  async list(limit: number): Promise<LedgerRecord[]> {
    return [...this.records.values()]
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      .slice(0, limit)
      .map((r) => structuredClone(r));
  }

  private prune(): void {
    // A Map keeps insertion order: the first records are the oldest.
    const over = this.records.size - MAX_MEMORY_RECORDS + 1;
    [...this.records.values()].forEach((record, i) => {
      if (i < over || expired(record, this.retentionMs)) void this.remove(record);
    });
  }
}
