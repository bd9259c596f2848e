// Follows the conductor's state dir: the task records (new lines are applied as they are appended),
// the instance registry, and the audit trail (whose growth is announced so open pages re-read it).
// fs.watch on the folders (inotify on Linux) instead of polling; a change re-reads only what grew.
import { watch, type FSWatcher } from "node:fs";
import { open, stat } from "node:fs/promises";
import { basename, dirname } from "node:path";
import type { TaskRecord } from "../core/governance/task-records.js";
import { InstanceRegistry, type InstanceRow } from "../core/instances/registry.js";

export interface StateFiles {
  tasksPath: string;
  stateDir: string;
  auditPath?: string;
  onRecord(record: TaskRecord): void;
  onInstances(rows: InstanceRow[]): void;
  onAudit(): void;
}

export async function followStateFiles(o: StateFiles): Promise<{ close(): void }> {
  const registry = new InstanceRegistry(o.stateDir);
  let offset = 0;
  let reading: Promise<void> = Promise.resolve();
  const readTasks = () =>
    (reading = reading
      .then(async () => {
        const grown = await readFrom(o.tasksPath, offset);
        offset = grown.offset;
        for (const line of grown.lines) {
          try {
            const record = JSON.parse(line) as TaskRecord;
            if (typeof record.session_id === "string") o.onRecord(record);
          } catch {
            // a torn line
          }
        }
      })
      .catch(() => undefined));
  const readInstances = () => registry.read().then(o.onInstances, () => undefined);

  await readTasks();
  await readInstances();
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
    if (o.auditPath && dirname(o.auditPath) === o.stateDir && name === basename(o.auditPath)) o.onAudit();
  });
  if (o.auditPath && dirname(o.auditPath) !== o.stateDir) watchDir(dirname(o.auditPath), (name) => name === basename(o.auditPath!) && o.onAudit());
  return { close: () => watchers.forEach((w) => w.close()) };
}

/** Whole lines added to `path` since `offset`. */
async function readFrom(path: string, offset: number): Promise<{ lines: string[]; offset: number }> {
  const size = await stat(path).then(
    (s) => s.size,
    () => 0,
  );
  if (size < offset) offset = 0; // replaced by a shorter file
  if (size === offset) return { lines: [], offset };
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(size - offset);
    await handle.read(buffer, 0, buffer.length, offset);
    const text = buffer.toString("utf8");
    const end = text.lastIndexOf("\n");
    if (end < 0) return { lines: [], offset };
    return {
      lines: text
        .slice(0, end)
        .split("\n")
        .filter((l) => l.trim()),
      offset: offset + Buffer.byteLength(text.slice(0, end + 1)),
    };
  } finally {
    await handle.close();
  }
}
