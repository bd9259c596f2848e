// vitest globalSetup of the whole run (every project, the unit one included). It runs in the main
// vitest process; workers are its child processes, started after it, with its environment.
// Setup: removes what crashed earlier runs left, lists the real HOME and the system temp dir, and
// gives the run its own HOME, XDG dirs and TMPDIR (clean-machine.ts). Teardown: fails the run on
// anything a test leaked (a server not stopped, a temp root not removed: the pid registry), on any
// process still running with the run's folder in its environment (strays.ts), on
// anything left in the run's HOME or TMPDIR, and on any entry the real HOME or temp dir gained.
import { existsSync, readdirSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { baseline, createRunDirs, leftovers, removeRunDirs, runEnvironment, runPid, RUN_PREFIX, type Baseline, type RunDirs } from "./clean-machine.js";
import { opencode2BuildName } from "./opencode2-build.js";
import { isAlive, orphaned, ownedBy, sweep } from "./registry.js";
import { sweepStrays } from "./strays.js";
import { pruneToolCache, TOOL_CACHE } from "./tool-cache.js";

const CHECKOUT = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
let run: { dirs: RunDirs; before: Baseline; saved: Record<string, string | undefined> } | undefined;

export async function setup(project: TestProject): Promise<void> {
  const home = homedir();
  const systemTmp = tmpdir();
  const stale = [...sweepEarlierRuns(systemTmp), ...sweep(orphaned, join(systemTmp, "occ-test-pids"))];
  if (stale.length) console.warn(`[global-setup] cleaned up after an earlier run:\n  ${stale.join("\n  ")}`);
  const pruned = await pruneToolCache({ keep: { opencode2: await opencode2BuildName() } });
  if (pruned.length) console.log(`[global-setup] tool cache: removed ${pruned.join(", ")}`);
  const vitestDirs = [project.tmpDir, ...project.vitest.projects.map((p) => p.tmpDir)];
  const before = baseline([CHECKOUT, TOOL_CACHE], vitestDirs, home, systemTmp);
  const dirs = createRunDirs(systemTmp);
  const env = runEnvironment(dirs, { home, env: process.env });
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  run = { dirs, before, saved };
}

export async function teardown(): Promise<void> {
  if (!run) return;
  const { dirs, before, saved } = run;
  run = undefined;
  const leaks = sweep(ownedBy(process.pid), dirs.registry);
  const stray = await sweepStrays(dirs.root);
  const left = leftovers(before, dirs, isAlive);
  removeRunDirs(dirs);
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  const problems = [
    ...(leaks.length ? [`tests leaked resources (every startOpencode() needs stop() in a finally/afterAll):\n  ${leaks.join("\n  ")}`] : []),
    ...(stray.length ? [`processes outlived the run (stop what a test starts, and what that starts; killed now):\n  ${stray.join("\n  ")}`] : []),
    ...(left.length
      ? [
          `tests wrote outside their temp dirs (give each process its own HOME, XDG dirs and TMPDIR, and remove them; docs/testing.md):\n  ${left.slice(0, 40).join("\n  ")}${left.length > 40 ? `\n  … ${left.length - 40} more` : ""}`,
        ]
      : []),
  ];
  if (problems.length) {
    // vitest only logs a teardown error ("error during close") and would still exit 0.
    process.exitCode = 1;
    throw new Error(problems.join("\n"));
  }
}

/** Run folders of runs that are gone (killed before their teardown): their processes and files. */
function sweepEarlierRuns(systemTmp: string): string[] {
  const lines: string[] = [];
  for (const name of readdirSync(systemTmp)) {
    const pid = runPid(name);
    if (!name.startsWith(RUN_PREFIX) || pid === undefined || isAlive(pid)) continue;
    const root = join(systemTmp, name);
    const registry = join(root, "registry");
    if (existsSync(registry)) lines.push(...sweep(() => true, registry));
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    lines.push(`removed ${root}`);
  }
  return lines;
}
