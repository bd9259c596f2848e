// Tools the tests install from the npm registry (other opencode releases, Node 22/24, client CLIs,
// bun) live in one cache outside the project tree and outside the user's HOME, shared between runs
// and between test workers: `OCC_TOOL_CACHE`, default `<tmpdir>/occ-tool-cache`.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export const TOOL_CACHE = process.env.OCC_TOOL_CACHE ?? join(tmpdir(), "occ-tool-cache");

/** A folder of the cache for one purpose (e.g. a build), created on first use. */
export async function toolCacheDir(name: string): Promise<string> {
  const dir = join(TOOL_CACHE, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

/**
 * `npm install <spec>` into its own prefix in the cache, once; returns that prefix (the package is
 * at `<prefix>/node_modules/<name>`, its bins in `<prefix>/node_modules/.bin`). Installs into a
 * temp folder and renames it into place, so two workers installing the same spec never see half an
 * install; the loser of the race throws its copy away.
 */
export async function npmInstalled(spec: string, options: { timeoutMs?: number } = {}): Promise<string> {
  const prefix = join(TOOL_CACHE, "npm", spec.replace(/[^A-Za-z0-9._@-]+/g, "_"));
  if (existsSync(join(prefix, ".complete"))) return prefix;
  await mkdir(join(TOOL_CACHE, "npm"), { recursive: true });
  const staging = await mkdtemp(`${prefix}.staging-`);
  try {
    await run("npm", ["install", "--prefix", staging, "--no-audit", "--no-fund", "--no-save", "--loglevel=error", spec], {
      timeout: options.timeoutMs ?? 600_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    await writeFile(join(staging, ".complete"), new Date().toISOString());
    // A folder without the marker is what a killed run left: replace it.
    if (existsSync(prefix) && !existsSync(join(prefix, ".complete"))) await rm(prefix, { recursive: true, force: true });
    try {
      await rename(staging, prefix);
    } catch (error) {
      if (!existsSync(join(prefix, ".complete"))) throw error;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return prefix;
}
