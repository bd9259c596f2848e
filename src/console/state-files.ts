// Follows the conductor's state dir: the task records (the newest at start, then each line as it is
// appended, across rotations), the instance and worktree registries, and the audit trail (whose
// growth is announced, at most twice a second, so an open page reads its newest entries again:
// never the whole trail).
// fs.watch on the folders (inotify on Linux) instead of polling; a change reads only what grew.
import { watch, type FSWatcher } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { liveEnd } from "../core/governance/jsonl-tail.js";
import { readTaskRecords, type TaskRecord } from "../core/governance/task-records.js";
import { InstanceRegistry, type InstanceRow } from "../core/instances/registry.js";
import { WorktreeRegistry, type WorktreeRow } from "../core/worktrees/registry.js";

export interface StateFiles {
  tasksPath: string;
  stateDir: string;
  auditPath?: string;
  onRecord(record: TaskRecord): void;
  onInstances(rows: InstanceRow[]): void;
  onWorktrees(rows: WorktreeRow[]): void;
  onAudit(): void;
}

/** Audit growth is announced at most this often. */
const AUDIT_NOTICE_MS = 500;

export async function followStateFiles(o: StateFiles): Promise<{ close(): void }> {
  const registry = new InstanceRegistry(o.stateDir);
  const worktrees = new WorktreeRegistry(o.stateDir);
  const apply = (line: string) => {
    try {
      const record = JSON.parse(line) as TaskRecord;
      if (typeof record.session_id === "string") o.onRecord(record);
    } catch {
      // a torn line
    }
  };
  // The newest records up to where following starts, so no line is read twice or missed.
  const start = await liveEnd(o.tasksPath);
  for (const record of await readTaskRecords(o.tasksPath, undefined, start)) o.onRecord(record);
  const tasks = new Follower(o.tasksPath, start);
  let reading: Promise<void> = Promise.resolve();
  const readTasks = () => (reading = reading.then(() => tasks.read(apply)).catch(() => undefined));
  const readInstances = () => registry.read().then(o.onInstances, () => undefined);
  const readWorktrees = () => worktrees.read().then(o.onWorktrees, () => undefined);
  const auditGrew = throttle(o.onAudit, AUDIT_NOTICE_MS);

  await readTasks();
  await readInstances();
  await readWorktrees();
  const watchers: FSWatcher[] = [];
  const watchDir = (dir: string, onFile: (name: string) => void) => {
    try {
      const w = watch(dir, { persistent: false }, (_event, name) => name && onFile(String(name)));
      w.on("error", () => undefined);
      watchers.push(w);
    } catch {
      // the folder does not exist yet: nothing to follow there
    }
  };
  watchDir(o.stateDir, (name) => {
    if (name === basename(o.tasksPath)) void readTasks();
    if (name === "instances.json") void readInstances();
    if (name === basename(worktrees.path)) void readWorktrees();
    if (o.auditPath && dirname(o.auditPath) === o.stateDir && name === basename(o.auditPath)) auditGrew.call();
  });
  if (o.auditPath && dirname(o.auditPath) !== o.stateDir) watchDir(dirname(o.auditPath), (name) => name === basename(o.auditPath!) && auditGrew.call());
  return {
    close: () => {
      watchers.forEach((w) => w.close());
      auditGrew.cancel();
      void reading.then(() => tasks.close());
    },
  };
}

/**
 * The whole lines appended to a file since the last read. It keeps the file open, so when the file
 * is rotated (renamed, a new one created) the rest of the old one is still read before the new one.
 */
class Follower {
  private handle: FileHandle | undefined;
  private ino: number | undefined;
  private offset: number;

  constructor(
    private readonly path: string,
    from?: { ino: number; offset: number },
  ) {
    this.ino = from?.ino;
    this.offset = from?.offset ?? 0;
  }

  async read(onLine: (line: string) => void): Promise<void> {
    if (this.ino !== undefined && !this.handle) {
      // The file where following starts: open it if it is still the live one.
      const info = await stat(this.path).catch(() => undefined);
      if (info?.ino === this.ino) this.handle = await open(this.path, "r");
      else {
        this.ino = undefined;
        this.offset = 0;
      }
    }
    if (this.handle) await this.drain(onLine);
    const info = await stat(this.path).catch(() => undefined);
    if (!info || info.ino === this.ino) return;
    // Rotated or created: the old file is read to its end above; now the new one from its start.
    await this.handle?.close();
    this.handle = await open(this.path, "r");
    this.ino = (await this.handle.stat()).ino;
    this.offset = 0;
    await this.drain(onLine);
  }

  async close(): Promise<void> {
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
  }

  private async drain(onLine: (line: string) => void): Promise<void> {
    const handle = this.handle!;
    const { size } = await handle.stat();
    if (size < this.offset) this.offset = 0; // truncated in place
    // `data` always starts at this.offset: the bytes after the last whole line read so far.
    let rest = Buffer.alloc(0);
    for (let pos = this.offset; pos < size;) {
      const chunk = Buffer.alloc(Math.min(1024 * 1024, size - pos));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      const data = rest.length > 0 ? Buffer.concat([rest, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
      const end = data.lastIndexOf(0x0a);
      if (end < 0) {
        rest = data;
        continue;
      }
      for (const line of data.toString("utf8", 0, end).split("\n")) if (line.trim()) onLine(line);
      this.offset += end + 1;
      rest = data.subarray(end + 1);
    }
  }
}

/** `fn` at once, then at most once per `ms` (a call meanwhile runs when the time is up). */
function throttle(fn: () => void, ms: number): { call(): void; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  let pending = false;
  const fire = () => {
    timer = undefined;
    if (!pending) return;
    pending = false;
    fn();
    timer = setTimeout(fire, ms);
  };
  return {
    call() {
      pending = true;
      if (!timer) fire();
    },
    cancel() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
