// A project directory as callers give it: opencode accepts a missing one and fails later
// (docs/opencode-behaviour.md §9), so it is validated here, once, for every caller.
import { realpath, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { quoted, UsageError } from "../errors.js";

/** Linux's PATH_MAX: no path is longer. */
export const MAX_PATH_CHARS = 4096;

/** The absolute path of an existing directory (symlinks resolved with `real: true`), or a clear error. */
export async function existingDirectory(directory: string, options: { real?: boolean } = {}): Promise<string> {
  const absolute = resolve(directory);
  const info = await stat(absolute).catch(() => undefined);
  if (!info) throw new UsageError(`Directory ${quoted(absolute)} does not exist. Give an existing project directory (absolute path).`);
  if (!info.isDirectory()) throw new UsageError(`${quoted(absolute)} is a file, not a directory. Give the project directory.`);
  return options.real ? realpath(absolute) : absolute;
}
