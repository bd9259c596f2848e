// The ledger in the state dir: $STATE_DIR/delegations/<id>.json per record (0600, written
// atomically), and for a request id a claim file delegations/requests/<sha256> made by link(2),
// which fails when it exists (and never leaves it half written),
// so two processes that share the state dir (two MCP servers, one restarted) can never both start
// the work of one request id. Changes to a record are locked read-modify-writes (file-lock.ts).
import { createHash, randomBytes } from "node:crypto";
import { link, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { takeLock } from "../file-lock.js";
import { ensureStateDir, readJson, writeJsonAtomic } from "../state-dir.js";
import type { LedgerRecord } from "./record.js";
import { DEFAULT_RETENTION_MS, expired, type LedgerStore } from "./store.js";

/** Records kept at most; the oldest go first. */
const MAX_RECORDS = 5_000;
/** Old records are swept at most this often per process (on a create). */
const SWEEP_EVERY_MS = 10 * 60_000;

/** What the earlier request-id log (requests.json, before the ledger) kept of a start. */
interface LegacyStart {
  tool: string;
  sessionIds: string[];
  startedAt: string;
}

export class FileLedgerStore implements LedgerStore {
  readonly dir: string;
  private readonly requests: string;
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly made = new Map<"records" | "requests", Promise<void>>();
  private sweptAt = 0;

  constructor(
    readonly stateDir: string,
    readonly retentionMs = DEFAULT_RETENTION_MS,
  ) {
    this.dir = join(stateDir, "delegations");
    this.requests = join(this.dir, "requests");
  }

  private path(id: string): string {
    if (!/^dlg_[A-Za-z0-9_-]{1,64}$/.test(id)) throw new Error(`Not a delegation id: ${JSON.stringify(id.slice(0, 80))}`);
    return join(this.dir, `${id}.json`);
  }

  private claimPath(requestId: string): string {
    return join(this.requests, createHash("sha256").update(requestId).digest("hex"));
  }

  /** Made once per store; made again when a write finds them gone (someone removed the state dir). */
  private folders(withRequests: boolean): Promise<void> {
    const key = withRequests ? "requests" : "records";
    let made = this.made.get(key);
    if (!made) {
      made = (async () => {
        await ensureStateDir(this.stateDir);
        await ensureStateDir(this.dir);
        if (withRequests) await ensureStateDir(this.requests);
      })();
      made.catch(() => this.made.delete(key));
      this.made.set(key, made);
    }
    return made;
  }

  async create(record: LedgerRecord): Promise<{ record: LedgerRecord; created: boolean }> {
    try {
      await this.folders(record.requestId !== undefined);
      await writeJsonAtomic(this.path(record.id), record).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
        this.made.clear();
        await this.folders(record.requestId !== undefined);
        await writeJsonAtomic(this.path(record.id), record);
      });
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      throw new Error(
        `The delegation ledger cannot be written in ${this.dir} (${e.code ?? e.message}): make the state dir writable (OPENCODE_CONDUCTOR_STATE_DIR, or the Conductor's stateDir).`,
        { cause: error },
      );
    }
    this.sweepSoon();
    if (record.requestId === undefined) return { record, created: true };
    for (let attempt = 0; attempt < 3; attempt++) {
      const claim = this.claimPath(record.requestId);
      if (await this.claim(claim, record.id)) {
        const legacy = await this.legacyStart(record.requestId);
        if (!legacy) return { record, created: true };
        // Started before the ledger existed: that start stands, as one record.
        const adopted: LedgerRecord = {
          ...record,
          kind: legacy.tool === "oc_delegate_parallel" ? "parallel" : "delegate",
          origin: legacy.tool,
          size: legacy.sessionIds.length,
          sessions: legacy.sessionIds,
          started: true,
          createdAt: legacy.startedAt,
        };
        await writeJsonAtomic(this.path(record.id), adopted);
        return { record: adopted, created: false };
      }
      const heldBy = (await readFile(claim, "utf8").catch(() => "")).trim();
      const held = heldBy ? await this.get(heldBy) : undefined;
      if (held) {
        await rm(this.path(record.id), { force: true });
        return { record: held, created: false };
      }
      // The claim outlived its record (swept, or its writer died between the two): free it, then claim again.
      if ((await readFile(claim, "utf8").catch(() => "")).trim() === heldBy) await rm(claim, { force: true });
    }
    throw new Error(`Could not claim request id ${JSON.stringify(record.requestId)} in ${this.requests}: its claim file keeps changing.`);
  }

  /** Creates the claim file with its content in one step (link of a written temp file): false when it exists. */
  private async claim(path: string, id: string): Promise<boolean> {
    const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    await writeFile(temp, id, { mode: 0o600, flag: "wx" });
    try {
      await link(temp, path);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw error;
    } finally {
      await rm(temp, { force: true });
    }
  }

  async get(id: string): Promise<LedgerRecord | undefined> {
    return readJson<LedgerRecord | undefined>(this.path(id), undefined);
  }

  update(id: string, change: (record: LedgerRecord) => LedgerRecord | undefined): Promise<LedgerRecord | undefined> {
    const path = this.path(id);
    // In this process one change at a time per record; across processes the lock file.
    const run = (this.chains.get(id) ?? Promise.resolve()).then(async () => {
      const release = await takeLock(`${path}.lock`, path);
      try {
        const current = await this.get(id);
        if (!current) return undefined;
        const next = change(current);
        if (!next) return current;
        // The record exists (just read under the lock): a power loss may undo this rename, never tear the record.
        await writeJsonAtomic(path, next, 0o600, { syncDir: false });
        return next;
      } finally {
        await release();
      }
    });
    const chained = run.catch(() => undefined);
    this.chains.set(id, chained);
    void chained.then(() => {
      if (this.chains.get(id) === chained) this.chains.delete(id);
    });
    return run;
  }

  async remove(record: LedgerRecord): Promise<void> {
    await rm(this.path(record.id), { force: true });
    if (record.requestId === undefined) return;
    const claim = this.claimPath(record.requestId);
    const heldBy = (await readFile(claim, "utf8").catch(() => "")).trim();
    if (heldBy === record.id) await rm(claim, { force: true });
  }

  async list(limit: number): Promise<LedgerRecord[]> {
    const records = await this.all();
    return records.sort((a, b) => b.createdAt.localeCompare(a.createdAt)).slice(0, limit);
  }

  private async all(): Promise<LedgerRecord[]> {
    const names = await readdir(this.dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [] as string[];
      throw error;
    });
    const records = await Promise.all(
      names.filter((n) => n.startsWith("dlg_") && n.endsWith(".json")).map((n) => this.get(n.slice(0, -".json".length)).catch(() => undefined)), // a torn or foreign file: skip it
    );
    return records.filter((r): r is LedgerRecord => r !== undefined && typeof r.id === "string");
  }

  /** Drops expired records (and the oldest past MAX_RECORDS), in the background, now and then. */
  private sweepSoon(): void {
    if (Date.now() - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = Date.now();
    void (async () => {
      const records = (await this.all()).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
      const drop = records.filter((r, i) => i >= MAX_RECORDS || expired(r, this.retentionMs));
      for (const r of drop) await this.remove(r);
    })().catch(() => undefined);
  }

  private async legacyStart(requestId: string): Promise<LegacyStart | undefined> {
    const file = await readJson<Record<string, LegacyStart>>(join(this.stateDir, "requests.json"), {}).catch(() => ({}) as Record<string, LegacyStart>);
    const start = file[requestId];
    return start && Array.isArray(start.sessionIds) && typeof start.tool === "string" ? start : undefined;
  }
}
