// A lock between the processes that share a state dir: a path next to what it guards, made only if
// it does not exist, retried briefly, broken when its holder is dead or it is older than a few
// seconds (a holder keeps it for milliseconds). Used for locked read-modify-writes of shared JSON
// files. The lock is a symbolic link whose target is its holder ("PID TOKEN"): symlink(2) makes it
// whole in one system call, where a file takes three (create, write, close) and is empty in between.
// Where links cannot be made (Windows without the right to), it is such a file.
import { randomBytes } from "node:crypto";
import { lstat, open, readFile, readlink, rm, symlink, unlink } from "node:fs/promises";
import { isProcessAlive } from "../client/discovery/processes.js";

export interface LockOptions {
  /** Give up taking the lock after this long (default 10 s). */
  timeoutMs?: number;
  /** A lock older than this is considered abandoned (default 5 s). */
  staleMs?: number;
}

/** Takes the lock at `lockPath`; resolves with its release. `what` names the guarded file in the timeout error. */
export async function takeLock(lockPath: string, what: string, options: LockOptions = {}): Promise<() => Promise<void>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 5_000;
  const token = `${process.pid} ${randomBytes(6).toString("hex")}`;
  const deadline = Date.now() + timeoutMs;
  for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
    const takenAt = Date.now();
    if (await create(lockPath, token)) {
      return async () => {
        // Only remove our own lock: it may have been broken as stale and taken by another. Nobody
        // breaks a live holder's lock younger than staleMs, so a lock held for less than half of
        // it is still ours and needs no read (the usual case: a holder keeps it for milliseconds).
        if (Date.now() - takenAt < staleMs / 2) return removeLock(lockPath);
        const current = await holderOf(lockPath).catch(() => "");
        if (current === token) await removeLock(lockPath);
      };
    }
    if (await isStale(lockPath, staleMs)) {
      await rm(lockPath, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`Could not lock ${what} within ${timeoutMs} ms: ${lockPath} is held by another conductor. Remove it if no conductor is running.`);
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** Makes the lock holding `token`; false when it exists (someone holds it). */
async function create(lockPath: string, token: string): Promise<boolean> {
  try {
    await symlink(token, lockPath);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    // Links refused (Windows without the right to make them): a lock file instead.
    if (code !== "EPERM" && code !== "ENOSYS" && code !== "EOPNOTSUPP") throw error;
  }
  try {
    const handle = await open(lockPath, "wx", 0o600);
    await handle.writeFile(token);
    await handle.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** "PID TOKEN" of a lock: a link's target, or a lock file's content (EINVAL: not a link). */
async function holderOf(lockPath: string): Promise<string> {
  return readlink(lockPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EINVAL") throw error;
    return readFile(lockPath, "utf8");
  });
}

/** unlink(2) alone: `rm` would stat the path twice first, on every release. Gone already is fine. */
async function removeLock(lockPath: string): Promise<void> {
  await unlink(lockPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error;
  });
}

async function isStale(lockPath: string, staleMs: number): Promise<boolean> {
  try {
    // lstat: the link's own age (its target names a holder, not a file).
    const [content, info] = await Promise.all([holderOf(lockPath), lstat(lockPath)]);
    const holder = Number(content.split(" ")[0]);
    // An empty lock file is a holder between create and write: only its age can tell.
    if (content && !isProcessAlive(holder)) return true;
    return Date.now() - info.mtimeMs > staleMs;
  } catch {
    return false; // gone already: the next attempt takes it
  }
}
