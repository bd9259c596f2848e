// The conductor's state directory (instances.json, audit log, locks) and crash-safe JSON writes.
// The registry holds server passwords, so the dir is 0700 and files 0600; a write goes to a temp
// file in the same directory, is fsynced and renamed over the target, so a reader (or a crash)
// never sees half a file.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { chmod, mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import type { Config } from "../config.js";

/**
 * Creates the state dir (Config.stateDir: OPENCODE_CONDUCTOR_STATE_DIR, else
 * $XDG_STATE_HOME/opencode-conductor) and parents if needed; only the owner may enter it.
 */
export async function ensureStateDir(where: string | Pick<Config, "stateDir">): Promise<string> {
  const dir = resolve(typeof where === "string" ? where : where.stateDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode only applies to new dirs (and is masked by umask): tighten an existing one too.
  const info = await stat(dir);
  if ((info.mode & 0o077) !== 0 && info.uid === process.getuid?.()) await chmod(dir, 0o700);
  if (!swept.has(dir)) {
    swept.add(dir);
    await sweepDeadTemps(dir);
  }
  return dir;
}

const swept = new Set<string>();
/** `.NAME.PID.HEX.tmp`: a writeTextAtomic temp file and the process that wrote it. */
const TEMP = /^\..+\.(\d+)\.[0-9a-f]{8}\.tmp$/;

/**
 * Removes the temp files of writes whose process is gone (killed, or exited, between writing the
 * temp file and renaming it): once per process and dir. A live writer's temp file stays.
 */
export async function sweepDeadTemps(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(TEMP.exec(name)?.[1]);
    if (pid && pid !== process.pid && !isAlive(pid)) await rm(join(dir, name), { force: true }).catch(() => undefined);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // alive, another user's
  }
}

/**
 * Temp files of writes not yet renamed. A process that exits meanwhile (process.exit after a
 * signal, with a write still awaiting its fsync) removes them on its way out, synchronously:
 * `exit` listeners cannot wait.
 */
const inFlight = new Set<string>();
function unfinished(temp: string): void {
  if (!exitHooked) {
    exitHooked = true;
    process.once("exit", () => {
      for (const t of inFlight) rmSync(t, { force: true });
    });
  }
  inFlight.add(temp);
}
let exitHooked = false;

export interface AtomicWrite {
  /**
   * `true` (the default) makes the rename durable too (the directory is fsynced). `false` for a file
   * that exists and is being replaced: a power loss may then undo the rename and leave the previous
   * version, whole, never a torn or missing file; a crashed process loses nothing either way (the
   * rename is in the kernel). It saves three system calls and an fsync of the directory per write.
   */
  syncDir?: boolean;
}

/** Writes `value` as JSON to `path` atomically with `mode` (default 0600). */
export async function writeJsonAtomic(path: string, value: unknown, mode = 0o600, o: AtomicWrite = {}): Promise<void> {
  await writeTextAtomic(path, `${JSON.stringify(value, null, 2)}\n`, mode, undefined, o);
}

/** Writes `text` to `path` atomically with `mode` (and, when given, that owner), or leaves `path` as it was. */
export async function writeTextAtomic(path: string, text: string, mode = 0o600, owner?: { uid: number; gid: number }, o: AtomicWrite = {}): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  // Listed before it exists: the file is on disk before open()'s promise resolves.
  unfinished(temp);
  const handle = await open(temp, "wx", mode).catch((error: unknown) => {
    inFlight.delete(temp);
    throw error;
  });
  try {
    await handle.writeFile(text);
    await handle.chmod(mode); // open()'s mode is masked by umask
    if (owner) await handle.chown(owner.uid, owner.gid);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    inFlight.delete(temp);
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  } finally {
    inFlight.delete(temp);
  }
  if (o.syncDir === false) return;
  // Make the rename itself durable; not every platform lets a directory be fsynced.
  const dirHandle = await open(dir, "r").catch(() => undefined);
  await dirHandle?.sync().catch(() => undefined);
  await dirHandle?.close();
}

/** Parsed JSON of `path`, or `fallback` when the file does not exist. */
export async function readJson<T>(path: string, fallback: T): Promise<T> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return fallback;
    throw error;
  }
  return JSON.parse(text) as T;
}
