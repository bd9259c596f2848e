// Prepares a runnable opencode 2.x binary for tests: bun from npm, the vendored 2.x source tarball
// (test/fixtures/opencode-2x/, see its README), `bun install --frozen-lockfile`, then bun's
// single-binary build. The result is cached in the shared tool cache under the tarball's sha256,
// so it is built once per machine; `OPENCODE2_BIN` skips all of it and uses that binary instead.
// Two workers preparing at once: each builds into its own staging folder and renames it into place
// (a rename is atomic; the loser throws its copy away), behind a lock file so the second one
// normally waits for the first instead of building too.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { mkdir, mkdtemp, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { isAlive } from "./registry.js";
import { markComplete, npmInstalled, toolCacheDir, usedEntry } from "./tool-cache.js";

const run = promisify(execFile);

const FIXTURE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "opencode-2x");
export const OPENCODE2_TARBALL = join(FIXTURE_DIR, "opencode-2x-src-b622626.tgz");
/** What the built binary reports as its version (the tarball is commit b622626, a 2.0 pre-release). */
export const OPENCODE2_SOURCE_VERSION = "2.0.0-src.b622626";
/** bun as measured with this tarball; the lockfile resolves with it. */
const BUN_SPEC = "bun@1.4.5";

export interface PreparedOpencode2 {
  /** The `opencode` 2.x executable. */
  binary: string;
  /** "env" when OPENCODE2_BIN chose it, "cache" when an earlier build was reused, "built" now. */
  source: "env" | "cache" | "built";
  /** Wall time of this preparation (ms). */
  ms: number;
}

/**
 * Set by the test run's global setup when it could not prepare the binary (global-setup-v2.ts):
 * its error, which every later preparation in the run (the workers) fails with at once.
 */
export const OPENCODE2_BUILD_FAILED = "OCC_OPENCODE2_BUILD_FAILED";

/** The error a test that needs opencode 2.x fails with when this run could not prepare it. */
export function opencode2Unavailable(reason: string): Error {
  return new Error(
    `opencode 2.x could not be prepared for this test run, so the tests that need it fail (the other projects ran):\n${reason}\n` +
      "Fix the cause above (or set OPENCODE2_BIN to a working 2.x binary) and run again.",
  );
}

let prepared: Promise<PreparedOpencode2> | undefined;

/** The 2.x binary, built on first use (17-40 s cold), then reused (a few ms). */
export function prepareOpencode2(): Promise<PreparedOpencode2> {
  const failed = process.env[OPENCODE2_BUILD_FAILED];
  if (failed) return Promise.reject(opencode2Unavailable(failed));
  return (prepared ??= prepare().catch((error: unknown) => {
    prepared = undefined; // let a later call try again
    throw error;
  }));
}

async function prepare(): Promise<PreparedOpencode2> {
  const started = Date.now();
  const fromEnv = process.env.OPENCODE2_BIN;
  if (fromEnv) {
    if (!existsSync(fromEnv))
      throw new Error(
        `OPENCODE2_BIN=${fromEnv.slice(0, 200)}: no such file. Point it at an opencode 2.x binary, or unset it to build one from the vendored source.`,
      );
    return { binary: fromEnv, source: "env", ms: Date.now() - started };
  }
  const hash = await opencode2BuildName();
  const buildsDir = await toolCacheDir("opencode2");
  const target = join(buildsDir, hash);
  const binary = join(target, "opencode2");
  if (await usedEntry(target)) return { binary, source: "cache", ms: Date.now() - started };

  const release = await acquireLock(join(buildsDir, `${hash}.lock`));
  try {
    // The holder of the lock before us may have finished it.
    if (await usedEntry(target)) return { binary, source: "cache", ms: Date.now() - started };
    await build(buildsDir, target);
    return { binary, source: "built", ms: Date.now() - started };
  } finally {
    await release();
  }
}

async function build(buildsDir: string, target: string): Promise<void> {
  const bunPrefix = await npmInstalled(BUN_SPEC);
  const bunBin = join(bunPrefix, "node_modules", ".bin");
  const staging = await mkdtemp(join(buildsDir, "staging-"));
  try {
    const src = join(staging, "src");
    await mkdir(src);
    await run("tar", ["xzf", OPENCODE2_TARBALL, "-C", src], { maxBuffer: 64 * 1024 * 1024 });
    const env: NodeJS.ProcessEnv = {
      PATH: `${bunBin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      HOME: join(staging, "home"), // bun must not write into the user's HOME
      // bun's package cache (1.2 GB) goes with the staging folder: a build happens once per source.
      BUN_INSTALL_CACHE_DIR: join(staging, "bun-cache"),
      npm_config_nodedir: "/usr", // native addons build against the system Node headers
      TMPDIR: staging,
    };
    const opts = { cwd: src, env, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 };
    await step("bun install", () => run("bun", ["install", "--frozen-lockfile"], opts));

    // script/build.ts reads the team list and asks git for the channel unless told; models.dev
    // data is baked in from a file (an empty catalogue: the tests configure their own provider).
    await mkdir(join(src, ".github"), { recursive: true });
    await writeFile(join(src, ".github", "TEAM_MEMBERS"), "");
    const modelsFile = join(staging, "models.json");
    await writeFile(modelsFile, "{}");
    const out = join(staging, "dist");
    await step("bun run script/build.ts", () =>
      run("bun", ["run", "script/build.ts", "--single", "--skip-install", `--outdir=${out}`], {
        ...opts,
        cwd: join(src, "packages", "cli"),
        env: { ...env, MODELS_DEV_API_JSON: modelsFile, OPENCODE_CHANNEL: "local", OPENCODE_VERSION: OPENCODE2_SOURCE_VERSION },
      }),
    );
    const built = await findExecutable(out);
    const result = join(staging, "result");
    await mkdir(result);
    await rename(built, join(result, "opencode2"));
    await markComplete(result);
    if (existsSync(target)) await rm(target, { recursive: true, force: true }); // a killed build's leftovers
    await rename(result, target);
  } finally {
    await rm(staging, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** The build writes `<outdir>/<name>-linux-x64/bin/opencode` (or similar): find the one executable. */
async function findExecutable(dir: string): Promise<string> {
  const { stdout } = await run("find", [dir, "-type", "f", "-perm", "-u+x", "-name", "opencode*"]);
  const files = stdout.split("\n").filter(Boolean);
  if (files.length !== 1) throw new Error(`the 2.x build left ${files.length} executables in ${dir}: ${files.join(", ").slice(0, 200)}`);
  return files[0]!;
}

async function step<T>(name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message?: string };
    const tail = `${e.stderr ?? ""}${e.stdout ?? ""}`.trim().slice(-1500) || e.message;
    throw new Error(`preparing opencode 2.x: ${name} failed:\n${tail}`, { cause: error });
  }
}

/** The cache entry of the build of the vendored source: its tarball's sha256, shortened. */
export async function opencode2BuildName(): Promise<string> {
  return (await sha256File(OPENCODE2_TARBALL)).slice(0, 16);
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * An exclusive lock file (O_EXCL). A lock older than `staleMs` is what a killed run left and is
 * taken over. Waits up to `waitMs` for another holder.
 */
export async function acquireLock(file: string, waitMs = 900_000, staleMs = 900_000): Promise<() => Promise<void>> {
  const deadline = Date.now() + waitMs;
  while (true) {
    try {
      const handle = await open(file, "wx");
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const age = await stat(file).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    const holder = Number(await readFile(file, "utf8").catch(() => ""));
    if (age > staleMs || (holder > 0 && !isAlive(holder))) {
      await rm(file, { force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(`another test run has been building opencode 2.x for ${Math.round(age / 1000)} s (lock ${file}); remove the lock if no build is running`);
    await new Promise((r) => setTimeout(r, 500)); // polling a lock file: no event to wait on
  }
}
