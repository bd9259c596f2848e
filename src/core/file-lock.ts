// A lock between the processes that share a state dir: an O_EXCL file next to what it guards,
// retried briefly, broken when its holder is dead or it is older than a few seconds (a holder keeps
// it for milliseconds). Used for locked read-modify-writes of shared JSON files.
import { randomBytes } from "node:crypto";
import { open, readFile, rm, stat, unlink } from "node:fs/promises";
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
    try {
      const takenAt = Date.now();
      const handle = await open(lockPath, "wx", 0o600);
      await handle.writeFile(token);
      await handle.close();
      return async () => {
        // Only remove our own lock: it may have been broken as stale and taken by another. Nobody
        // breaks a live holder's lock younger than staleMs, so a lock held for less than half of
        // it is still ours and needs no read (the usual case: a holder keeps it for milliseconds).
        if (Date.now() - takenAt < staleMs / 2) return removeLock(lockPath);
        const current = await readFile(lockPath, "utf8").catch(() => "");
        if (current === token) await removeLock(lockPath);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
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

/** unlink(2) alone: `rm` would stat the path twice first, on every release. Gone already is fine. */
async function removeLock(lockPath: string): Promise<void> {
  await unlink(lockPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error;
  });
}

async function isStale(lockPath: string, staleMs: number): Promise<boolean> {
  try {
    const [content, info] = await Promise.all([readFile(lockPath, "utf8"), stat(lockPath)]);
    const holder = Number(content.split(" ")[0]);
    // An empty file is a holder between create and write: only its age can tell.
    if (content && !isProcessAlive(holder)) return true;
    return Date.now() - info.mtimeMs > staleMs;
  } catch {
    return false; // gone already: the next attempt takes it
  }
}
