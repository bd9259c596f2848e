// The test run leaves the machine as it found it: nothing new in the real HOME or the system temp
// dir. The run's global setup (global-setup.ts) lists both, then gives the whole run (its workers
// and everything they start) a HOME, XDG dirs and TMPDIR of its own inside one run folder
// (`<tmp>/occ-run-<pid>-…`), so a test that forgets to give a process its own dirs writes there,
// where the teardown finds it, not into the user's files. The teardown fails the run when that
// HOME or TMPDIR kept anything, or when the real HOME or temp dir gained an entry (listed before
// and after: that catches writers that ignore the environment), then removes the run folder.
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, join, relative, sep } from "node:path";

/** What each check looks at, and how deep (a HOME can be big: its depth is bounded). */
export const HOME_DEPTH = 6;
const MAX_ENTRIES = 200_000;

/**
 * Entries a tool outside our control writes whatever its environment says, and why it is allowed.
 * Each was seen on a run and traced to its writer (docs/testing.md lists them). vitest's own
 * per-project folders (`<tmp>/<nanoid>`, made before the global setup and removed after its
 * teardown) are not patterns: the setup passes their exact paths (`Baseline.vitest`).
 */
export const ALLOWED: Array<{ where: "home" | "tmp"; pattern: RegExp; why: string }> = [
  {
    where: "tmp",
    pattern: /^tsx-\d+(\/|$)/,
    why: "tsx's compile cache (`<TMPDIR>/tsx-<uid>`), written by the tests that run our scripts with tsx (codegen, spec:diff); in the run's TMPDIR it goes with the run",
  },
];

/**
 * Every path under `root` (relative, sorted), down to `maxDepth` levels, skipping `skip` (absolute
 * paths: the checkout and the tool cache when they live in HOME) and not following symlinks.
 */
export function listTree(root: string, options: { maxDepth: number; skip?: string[] }): string[] {
  const out: string[] = [];
  const skip = new Set(options.skip ?? []);
  const walk = (dir: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return; // unreadable or gone meanwhile
    }
    for (const name of names) {
      if (out.length >= MAX_ENTRIES) return;
      const path = join(dir, name);
      if (skip.has(path)) continue;
      out.push(relative(root, path));
      if (depth < options.maxDepth) {
        try {
          if (lstatSync(path).isDirectory()) walk(path, depth + 1);
        } catch {
          // gone meanwhile
        }
      }
    }
  };
  if (existsSync(root)) walk(root, 1);
  return out;
}

/** Entries of `after` that `before` did not have, without those under a new parent (the parent says it). */
export function gained(before: string[], after: string[]): string[] {
  const had = new Set(before);
  const fresh = after.filter((p) => !had.has(p)).sort();
  return fresh.filter((p) => !fresh.some((q) => p !== q && p.startsWith(q + sep)));
}

export interface RunDirs {
  /** The run folder: `<tmp>/occ-run-<pid>-XXXXXX`. */
  root: string;
  /** HOME (and XDG dirs) of every process of the run that is not given one. */
  home: string;
  /** TMPDIR of the run's processes. */
  tmp: string;
  /** Where per-worker scratch homes go (scratch-home.ts); removed with the run, not checked. */
  scratch: string;
  /** The pid registry of the run (registry.ts). */
  registry: string;
}

export const RUN_PREFIX = "occ-run-";

export function createRunDirs(systemTmp: string, pid = process.pid): RunDirs {
  const root = mkdtempSync(join(systemTmp, `${RUN_PREFIX}${pid}-`));
  // mkdtemp makes it 0700; a test that runs a process as another user below it (audit-unwritable.test.ts
  // runs the MCP server as `nobody` under root) needs to pass through: traversal only, no listing.
  chmodSync(root, 0o711);
  const dirs = { root, home: join(root, "home"), tmp: join(root, "tmp"), scratch: join(root, "scratch"), registry: join(root, "registry") };
  for (const d of [dirs.home, dirs.tmp, dirs.scratch, dirs.registry]) mkdirSync(d);
  return dirs;
}

/** The environment the run's workers inherit: its own HOME, XDG dirs and TMPDIR, the user's npm settings kept. */
export function runEnvironment(dirs: RunDirs, real: { home: string; env: NodeJS.ProcessEnv }): Record<string, string> {
  const npmrc = real.env.npm_config_userconfig ?? join(real.home, ".npmrc");
  return {
    HOME: dirs.home,
    XDG_CONFIG_HOME: join(dirs.home, ".config"),
    XDG_DATA_HOME: join(dirs.home, ".local", "share"),
    XDG_STATE_HOME: join(dirs.home, ".local", "state"),
    XDG_CACHE_HOME: join(dirs.home, ".cache"),
    TMPDIR: dirs.tmp,
    OCC_TEST_REGISTRY: dirs.registry,
    OCC_SCRATCH_DIR: dirs.scratch,
    // npm reads the user's settings (registry, certificates) from HOME: keep them.
    ...(existsSync(npmrc) ? { npm_config_userconfig: npmrc } : {}),
  };
}

/** The pid in a run folder's name (`occ-run-<pid>-…`), if it is one. */
export function runPid(name: string): number | undefined {
  const m = /^occ-run-(\d+)-/.exec(basename(name));
  return m ? Number(m[1]) : undefined;
}

/** The real HOME and temp dir as the run found them. */
export interface Baseline {
  home: string;
  tmp: string;
  skip: string[];
  /** vitest's per-project temp folders (TestProject.tmpDir): its own, removed after the teardown. */
  vitest: string[];
  homeEntries: string[];
  tmpEntries: string[];
}

export function baseline(skip: string[], vitest: string[], home = homedir(), tmp = tmpdir()): Baseline {
  return { home, tmp, skip, vitest, homeEntries: listTree(home, { maxDepth: HOME_DEPTH, skip }), tmpEntries: listTree(tmp, { maxDepth: 1 }) };
}

const allowed = (where: "home" | "tmp", path: string) => ALLOWED.some((a) => a.where === where && a.pattern.test(path));

/**
 * What the run left: entries of its own HOME and TMPDIR, and entries the real HOME and temp dir
 * gained (other test runs' folders excepted, while their run is alive). One line each.
 */
export function leftovers(b: Baseline, dirs: RunDirs, isAlive: (pid: number) => boolean): string[] {
  const lines: string[] = [];
  for (const [what, dir, depth] of [
    ["the run's HOME", dirs.home, HOME_DEPTH],
    ["the run's TMPDIR", dirs.tmp, 2],
  ] as const) {
    const where = what === "the run's HOME" ? "home" : "tmp";
    for (const p of gained([], listTree(dir, { maxDepth: depth })).filter((p) => !allowed(where, p))) lines.push(`${what}: ${join(dir, p)}`);
  }
  for (const p of gained(b.homeEntries, listTree(b.home, { maxDepth: HOME_DEPTH, skip: b.skip })).filter((p) => !allowed("home", p)))
    lines.push(`the real HOME: ${join(b.home, p)}`);
  for (const p of gained(b.tmpEntries, listTree(b.tmp, { maxDepth: 1 }))) {
    if (join(b.tmp, p) === dirs.root || b.vitest.includes(join(b.tmp, p)) || allowed("tmp", p)) continue;
    const pid = runPid(p);
    if (pid !== undefined && pid !== process.pid && isAlive(pid)) continue; // another test run, still going
    lines.push(`the system temp dir: ${join(b.tmp, p)}${written(join(b.tmp, p))}`);
  }
  return lines;
}

export function removeRunDirs(dirs: RunDirs): void {
  rmSync(dirs.root, { recursive: true, force: true, maxRetries: 3 });
}

/** When a leftover was written and how big it is: what finds the test that wrote it in the run's log. */
function written(path: string): string {
  try {
    const st = statSync(path);
    return ` (${st.isDirectory() ? "folder" : `${st.size} bytes`}, written ${st.mtime.toISOString()})`;
  } catch {
    return "";
  }
}
