// Writing a client's file: to a temp file in the same folder, renamed over it, so a failure leaves
// the old file whole. The real file behind a symlink is written (a dotfile manager's link stays a
// link), with its owner and its mode kept; a file that holds --env values is 0600.
import { mkdir, readFile, realpath, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { writeTextAtomic } from "../core/state-dir.js";

export async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    // ENOTDIR: a folder on the way is a file, so this file does not exist (writing it will say why not).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
}

/** Writes the file; returns a note when its mode was tightened. */
export async function writeClientFile(path: string, text: string, secret: boolean): Promise<string | undefined> {
  const real = await realpath(path).catch(() => undefined);
  const info = real ? await stat(real) : undefined;
  const target = real ?? path;
  if (!info) await mkdir(dirname(target), { recursive: true });
  const umask = process.umask();
  const current = info ? info.mode & 0o777 : 0o666 & ~umask;
  // Never looser than it was; without group and other bits once it holds a secret.
  const mode = secret ? current & 0o700 : current;
  // Only root can give a file away (e.g. `sudo opencode-conductor install` on a user's config).
  const owner = info && process.getuid?.() === 0 && info.uid !== 0 ? { uid: info.uid, gid: info.gid } : undefined;
  await writeTextAtomic(target, text, mode, owner);
  return info && mode !== current ? `mode ${octal(current)} → ${octal(mode)}: it now holds --env values` : undefined;
}

/** Removes the file; one that is not there (or whose folder is a file) is already gone. */
export async function removeClientFile(path: string): Promise<void> {
  await rm(path, { force: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOTDIR") throw error;
  });
}

const octal = (mode: number) => `0${mode.toString(8).padStart(3, "0")}`;
