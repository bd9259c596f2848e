// The one writer of an append-only JSON-lines file (the audit trail, the task records) in this
// process, however many MCP sessions use it: lines are written in order, one write() each through an
// O_APPEND descriptor (other processes' lines stay whole), mode 0600, rotated by size (segments.ts).
// The descriptor is open only while lines are being written, so no session holds one.
//
// A line that cannot be written is never dropped in silence: the writer says it is unwritable (with
// the system's reason, once, to its listeners), holds the lines in memory (bounded), retries by
// itself every few seconds and writes them, in order, as soon as it can, then says it recovered.
import { constants } from "node:fs";
import { access, mkdir, open, stat, statfs, type FileHandle } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { DEFAULT_ROTATION, rotate, type Rotation } from "./segments.js";

export interface FileHealth {
  path: string;
  writable: boolean;
  /** Why not: the system's error (EACCES, ENOSPC …), when not writable. */
  error?: string;
  /** When it stopped being writable (ISO time). */
  since?: string;
  /** Lines kept in memory until the file can be written again. */
  held: number;
  /** Lines given up because more were waiting than the writer keeps. */
  dropped: number;
}

export interface Written {
  written: boolean;
  /** Why not, when not written (the line is held, or was dropped). */
  error?: string;
}

export type HealthChange =
  | { kind: "failed"; health: FileHealth }
  /** `outage` is the failure just ended; `written` the held lines written now. */
  | { kind: "recovered"; health: FileHealth; outage: { error: string; since: string; until: string; dropped: number }; written: number };

/** How often an unwritable file is tried again, with no call needed. */
export const RETRY_MS = 5_000;
/** At most this many lines (and bytes) wait in memory; past that the oldest are dropped and counted. */
const MAX_HELD_LINES = 1_000;
const MAX_HELD_BYTES = 4 * 1024 * 1024;
/** Less free space than this on the file's disk counts as full (a line is at most 4 KB). */
const MIN_FREE_BYTES = 64 * 1024;

interface HeldLine {
  bytes: Buffer;
  state: "held" | "written" | "dropped" | "withdrawn";
  /** Withdrawn rather than held when it cannot be written now. */
  nowOrNever: boolean;
}

const writers = new Map<string, JsonlWriter>();

/** The process's writer of `path` (made on first use; the first caller's rotation holds). */
export function sharedWriter(path: string, rotation: Rotation = DEFAULT_ROTATION): JsonlWriter {
  const key = resolve(path);
  let writer = writers.get(key);
  if (!writer) writers.set(key, (writer = new JsonlWriter(key, rotation)));
  return writer;
}

export class JsonlWriter {
  private queue: Promise<void> = Promise.resolve();
  private held: HeldLine[] = [];
  private heldBytes = 0;
  private dropped = 0;
  private failure: { error: string; since: string } | undefined;
  /** A failed write may have left part of a line: the next write starts on a new line. */
  private mayBeTorn = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(change: HealthChange) => void>();
  /** The first check, made when the writer is created (before any line). */
  readonly checked: Promise<void>;

  constructor(
    readonly path: string,
    readonly rotation: Rotation = DEFAULT_ROTATION,
  ) {
    this.checked = this.enqueue(() => this.probe());
  }

  /**
   * Appends one line (`text` without its newline). Never rejects: says whether it was written.
   * `nowOrNever`: a line that cannot be written now is withdrawn instead of held (a line that
   * announces work, which does not start without it).
   */
  append(text: string, o: { nowOrNever?: boolean } = {}): Promise<Written> {
    const line: HeldLine = { bytes: Buffer.from(`${text}\n`), state: "held", nowOrNever: o.nowOrNever === true };
    this.hold(line);
    return this.enqueue(() => this.flush()).then(() =>
      line.state === "written" ? { written: true } : { written: false, error: this.failure?.error ?? "not written" },
    );
  }

  health(): FileHealth {
    return {
      path: this.path,
      writable: !this.failure,
      ...(this.failure ? { error: this.failure.error, since: this.failure.since } : {}),
      held: this.held.length,
      dropped: this.dropped,
    };
  }

  /** Tries now: writes what is held, else checks the file could be written. */
  async check(): Promise<FileHealth> {
    await this.enqueue(() => (this.held.length > 0 ? this.flush() : this.probe()));
    return this.health();
  }

  onHealth(listener: (change: HealthChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once every line appended so far has been tried. */
  async settled(): Promise<void> {
    await this.queue;
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step, step);
    return this.queue;
  }

  private hold(line: HeldLine): void {
    this.held.push(line);
    this.heldBytes += line.bytes.length;
    while (this.held.length > MAX_HELD_LINES || this.heldBytes > MAX_HELD_BYTES) {
      const oldest = this.held.shift()!;
      this.heldBytes -= oldest.bytes.length;
      oldest.state = "dropped";
      this.dropped += 1;
    }
  }

  private async flush(): Promise<void> {
    if (this.held.length === 0) return;
    let handle: FileHandle | undefined;
    const before = this.held.length;
    try {
      let file = await this.openForAppend();
      handle = file.handle;
      while (this.held.length > 0) {
        const line = this.held[0]!.bytes;
        if (file.regular && file.size > 0 && file.size + line.length > this.rotation.maxBytes) {
          await handle.close();
          handle = undefined;
          // A file that cannot be rotated (a read-only folder) can still take lines: it grows, and the next line tries again.
          await rotate(this.path, file.ino, this.rotation).catch(() => undefined);
          file = await this.openForAppend();
          handle = file.handle;
        }
        const { bytesWritten } = await handle.write(line, 0, line.length);
        if (bytesWritten < line.length) {
          this.mayBeTorn = true;
          throw Object.assign(new Error(`only ${bytesWritten} of ${line.length} bytes were written (no space left on the device?)`), { code: "ENOSPC" });
        }
        this.held.shift()!.state = "written";
        this.heldBytes -= line.length;
        file.size += line.length;
      }
      this.recovered(before);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOSPC") this.mayBeTorn = true;
      this.withdraw();
      this.failed(error);
    } finally {
      await handle?.close().catch(() => undefined);
    }
  }

  private withdraw(): void {
    for (const line of this.held) if (line.nowOrNever) line.state = "withdrawn";
    this.held = this.held.filter((line) => line.state === "held");
    this.heldBytes = this.held.reduce((sum, line) => sum + line.bytes.length, 0);
  }

  private async openForAppend(): Promise<{ handle: FileHandle; regular: boolean; ino: number; size: number }> {
    // The folder is made when the open finds it missing, not before every flush.
    const handle = await open(this.path, "a", 0o600).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      return open(this.path, "a", 0o600);
    });
    try {
      const info = await handle.stat();
      const regular = info.isFile();
      // open()'s mode applies only to a new file; never touch a device (/dev/stderr) or someone else's file.
      if (regular && (info.mode & 0o777) !== 0o600 && info.uid === process.getuid?.()) await handle.chmod(0o600);
      let size = info.size;
      if (regular && this.mayBeTorn && size > 0) {
        const last = Buffer.alloc(1);
        await handle.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) {
          const { bytesWritten } = await handle.write("\n");
          if (bytesWritten !== 1) throw Object.assign(new Error("no space left on the device"), { code: "ENOSPC" });
          size += 1;
        }
      }
      this.mayBeTorn = false;
      return { handle, regular, ino: info.ino, size };
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
  }

  /** Whether a line could be written now, without writing one (and without creating the file). */
  private async probe(): Promise<void> {
    try {
      const info = await stat(this.path).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT" || error.code === "ENOTDIR") return undefined;
        throw error;
      });
      let folder = dirname(this.path);
      if (info) {
        if (info.isDirectory()) throw Object.assign(new Error(`EISDIR: ${this.path} is a directory`), { code: "EISDIR" });
        // O_NONBLOCK: a FIFO without a reader answers at once instead of blocking a thread.
        const handle = await open(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_NONBLOCK);
        await handle.close();
        if (!info.isFile()) return this.recovered(0);
      } else {
        folder = await nearestFolder(folder);
        await access(folder, constants.W_OK | constants.X_OK);
      }
      const space = await statfs(folder);
      const free = space.bavail * space.bsize;
      if (free < MIN_FREE_BYTES) throw Object.assign(new Error(`ENOSPC: no space left on the device (${free} bytes free)`), { code: "ENOSPC" });
      this.recovered(0);
    } catch (error) {
      this.failed(error);
    }
  }

  private failed(error: unknown): void {
    const message = (error as Error)?.message ?? String(error);
    if (this.failure) this.failure.error = message;
    else {
      this.failure = { error: message, since: new Date().toISOString() };
      this.emit({ kind: "failed", health: this.health() });
    }
    this.scheduleRetry();
  }

  private recovered(written: number): void {
    clearTimeout(this.retry);
    this.retry = undefined;
    const failure = this.failure;
    if (!failure) return;
    this.failure = undefined;
    const outage = { ...failure, until: new Date().toISOString(), dropped: this.dropped };
    this.dropped = 0;
    this.emit({ kind: "recovered", health: this.health(), outage, written });
  }

  private scheduleRetry(): void {
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.check();
    }, RETRY_MS);
    this.retry.unref();
  }

  private emit(change: HealthChange): void {
    for (const listener of this.listeners) listener(change);
  }
}

/** The closest folder at or above `folder` that exists (where the missing ones would be made). */
async function nearestFolder(folder: string): Promise<string> {
  for (let at = folder; ; at = dirname(at)) {
    const info = await stat(at).catch(() => undefined);
    if (info) {
      if (!info.isDirectory()) throw Object.assign(new Error(`ENOTDIR: ${at} is not a directory`), { code: "ENOTDIR" });
      return at;
    }
    if (dirname(at) === at) return at;
  }
}
