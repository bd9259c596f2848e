// An append-only JSON-lines file that rotates by size: the live file `path` and the rotated
// segments `path.1`, `path.2`, … beside it, a higher number being newer. When the live file passes
// `maxBytes` the writer that notices renames it to the next number (under a lock file, so that two
// processes never rotate the same file twice) and removes the oldest segments past `keep`. So a
// segment holds at most `maxBytes` (a single line longer than that gets a segment of its own).
import { open, readdir, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export interface Rotation {
  /** The live file is rotated once a line would take it past this size. */
  maxBytes: number;
  /** Rotated segments kept besides the live file; older ones are removed. */
  keep: number;
}

export const DEFAULT_ROTATION: Rotation = { maxBytes: 64 * 1024 * 1024, keep: 10 };

export interface Segment {
  path: string;
  /** Its number; the live file is last, as Infinity. */
  seq: number;
  /** Survives the rename at rotation, so a reader's place (a cursor) follows its segment. */
  ino: number;
  size: number;
}

/** A lock older than this was left by a process that died while rotating. */
const STALE_LOCK_MS = 30_000;

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The file's segments, oldest first, the live file last (when it exists). A regular file only. */
export async function segmentsOf(path: string): Promise<Segment[]> {
  const pattern = new RegExp(`^${escaped(basename(path))}\\.(\\d+)$`);
  const names = await readdir(dirname(path)).catch(() => [] as string[]);
  const rotated = names.flatMap((name) => {
    const m = pattern.exec(name);
    return m ? [{ path: join(dirname(path), name), seq: Number(m[1]) }] : [];
  });
  rotated.sort((a, b) => a.seq - b.seq);
  const found: Segment[] = [];
  for (const s of [...rotated, { path, seq: Infinity }]) {
    const info = await stat(s.path).catch(() => undefined);
    if (info?.isFile()) found.push({ ...s, ino: info.ino, size: info.size });
  }
  return found;
}

/**
 * Renames the live file (the one with inode `ino`) to the next segment and drops the oldest past
 * `keep`. Nothing happens when another process rotated it first, or holds the lock right now.
 */
export async function rotate(path: string, ino: number, rotation: Rotation): Promise<void> {
  const lock = `${path}.lock`;
  if (!(await takeLock(lock))) return;
  try {
    const live = await stat(path).catch(() => undefined);
    if (!live || live.ino !== ino || live.size === 0) return; // another process rotated it first
    const segments = (await segmentsOf(path)).filter((s) => s.seq !== Infinity);
    await rename(path, `${path}.${(segments.at(-1)?.seq ?? 0) + 1}`);
    for (const old of segments.slice(0, Math.max(0, segments.length + 1 - rotation.keep))) await rm(old.path, { force: true });
  } finally {
    await rm(lock, { force: true });
  }
}

async function takeLock(lock: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lock, "wx", 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const held = await stat(lock).catch(() => undefined);
      if (held && Date.now() - held.mtimeMs < STALE_LOCK_MS) return false;
      await rm(lock, { force: true });
    }
  }
  return false;
}
