// Tools the tests install from the npm registry (other opencode releases, Node 22/24, client CLIs,
// bun) live in one cache shared between runs and between test workers: `OCC_TOOL_CACHE`, default
// `node_modules/.cache/occ-tool-cache` in this checkout. Never the system temp dir (the tests leave
// that as they found it) and never HOME. It stays bounded: every use stamps its entry, and the
// test run's global setup removes entries unused for PRUNE_AFTER_DAYS and builds a newer source
// replaced (pruneToolCache); npm's own download cache of an install is thrown away with it.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

const CHECKOUT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const TOOL_CACHE = process.env.OCC_TOOL_CACHE || join(CHECKOUT, "node_modules", ".cache", "occ-tool-cache");

/** An entry unused this long is removed by the next test run. */
export const PRUNE_AFTER_DAYS = 30;
/** Marks a finished entry (an install or a build); its mtime is the entry's last use. */
const COMPLETE = ".complete";

/** A folder of the cache for one purpose (e.g. a build), created on first use. */
export async function toolCacheDir(name: string): Promise<string> {
  const dir = join(TOOL_CACHE, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Whether `entry` is complete; if so its use is stamped (the pruning keeps what is used). */
export async function usedEntry(entry: string): Promise<boolean> {
  const marker = join(entry, COMPLETE);
  if (!existsSync(marker)) return false;
  const now = new Date();
  await utimes(marker, now, now).catch(() => undefined); // a read-only cache still works
  return true;
}

/** Marks `entry` (a staging folder about to be renamed into place) complete. */
export async function markComplete(entry: string): Promise<void> {
  await writeFile(join(entry, COMPLETE), new Date().toISOString());
}

/**
 * `npm install <spec>` into its own prefix in the cache, once; returns that prefix (the package is
 * at `<prefix>/node_modules/<name>`, its bins in `<prefix>/node_modules/.bin`). Installs into a
 * temp folder and renames it into place, so two workers installing the same spec never see half an
 * install; the loser of the race throws its copy away. npm's download cache for it is a folder of
 * that temp folder, removed with it (not ~/.npm).
 */
export async function npmInstalled(spec: string, options: { timeoutMs?: number } = {}): Promise<string> {
  const prefix = join(TOOL_CACHE, "npm", spec.replace(/[^A-Za-z0-9._@-]+/g, "_"));
  if (await usedEntry(prefix)) return prefix;
  await mkdir(join(TOOL_CACHE, "npm"), { recursive: true });
  const staging = await mkdtemp(`${prefix}.staging-`);
  const scratch = await mkdtemp(join(TOOL_CACHE, "npm-scratch-"));
  try {
    await run("npm", ["install", "--prefix", staging, "--cache", join(scratch, "cache"), "--no-audit", "--no-fund", "--no-save", "--loglevel=error", spec], {
      timeout: options.timeoutMs ?? 600_000,
      maxBuffer: 16 * 1024 * 1024,
      // npm's logs and temp files go with its cache; the user's npm settings (~/.npmrc) still apply.
      env: { ...process.env, TMPDIR: scratch, npm_config_logs_dir: join(scratch, "logs"), npm_config_update_notifier: "false" },
    });
    await markComplete(staging);
    // A folder without the marker is what a killed run left: replace it.
    if (existsSync(prefix) && !existsSync(join(prefix, COMPLETE))) await rm(prefix, { recursive: true, force: true });
    try {
      await rename(staging, prefix);
    } catch (error) {
      if (!existsSync(join(prefix, COMPLETE))) throw error;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  }
  return prefix;
}

/**
 * Removes what the cache no longer needs: entries (`npm/<spec>`, `opencode2/<build>`) unused for
 * `maxAgeDays`, half-finished ones a killed run left (staging folders, entries without their
 * marker, older than a day), builds other than `keep` names, and folders of earlier layouts.
 * Returns what it removed, for the run's log.
 */
export async function pruneToolCache(options: { maxAgeDays?: number; keep?: { opencode2?: string }; now?: number; cache?: string } = {}): Promise<string[]> {
  const cache = options.cache ?? TOOL_CACHE;
  const now = options.now ?? Date.now();
  const maxAgeMs = (options.maxAgeDays ?? PRUNE_AFTER_DAYS) * 86_400_000;
  const removed: string[] = [];
  const remove = async (path: string, why: string) => {
    await rm(path, { recursive: true, force: true, maxRetries: 3 });
    removed.push(`${path} (${why})`);
  };
  const age = async (path: string) => now - (await stat(path)).mtimeMs;
  if (!existsSync(cache)) return removed;
  for (const top of await readdir(cache)) {
    const path = join(cache, top);
    if (top === "npm" || top === "opencode2") continue;
    // An earlier layout kept bun's 1.2 GB package cache here; builds now keep it in their staging folder.
    if (top === "bun-install-cache") await remove(path, "no longer used");
    else if (top.startsWith("npm-scratch-") && (await age(path)) > 86_400_000) await remove(path, "left by a killed install");
  }
  for (const group of ["npm", "opencode2"]) {
    const dir = join(cache, group);
    if (!existsSync(dir)) continue;
    for (const name of await readdir(dir)) {
      const path = join(dir, name);
      if (name.endsWith(".lock")) continue;
      const marker = join(path, COMPLETE);
      if (!existsSync(marker)) {
        if ((await age(path)) > 86_400_000) await remove(path, "unfinished, left by a killed run");
        continue;
      }
      if (group === "opencode2" && options.keep?.opencode2 && name !== options.keep.opencode2) await remove(path, "built from an older source");
      else if ((await age(marker)) > maxAgeMs) await remove(path, `unused for ${options.maxAgeDays ?? PRUNE_AFTER_DAYS} days`);
    }
  }
  return removed;
}
