// A file registry of the opencode servers and temp roots that tests start, so the global teardown
// can find what a test forgot to stop (a leaked server keeps ~300 MB and a port). One JSON file
// per thing in the run's registry folder (`OCC_TEST_REGISTRY`, set by the global setup for the
// whole run; else os.tmpdir()/occ-test-pids/). Entries name the process that created them
// (`owner`) and its parent: a vitest run owns the entries its workers (its children) wrote.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

/** The registry folder of this run (read at each call: the global setup sets it for the run). */
export function registryDir(): string {
  return process.env.OCC_TEST_REGISTRY || join(tmpdir(), "occ-test-pids");
}

interface Owned {
  owner: number;
  ownerParent: number;
  startedBy: string;
  startedAt: number;
}
export interface PidEntry extends Owned {
  kind: "pid";
  pid: number;
  /** Substring of the process command line, checked before killing (pids get reused). */
  command: string;
  root?: string;
}
export interface RootEntry extends Owned {
  kind: "root";
  root: string;
}
export type Entry = PidEntry | RootEntry;

const fileOf = (e: { kind: "pid"; pid: number } | { kind: "root"; root: string }, dir: string) =>
  join(dir, e.kind === "pid" ? `pid-${e.pid}.json` : `root-${basename(e.root)}.json`);

function owned(startedBy?: string): Owned {
  return { owner: process.pid, ownerParent: process.ppid, startedBy: startedBy ?? callerTestFile() ?? "unknown", startedAt: Date.now() };
}

export function registerPid(pid: number, command: string, root?: string, dir = registryDir()): void {
  write({ kind: "pid", pid, command, ...(root ? { root } : {}), ...owned() }, dir);
}

export function registerRoot(root: string, dir = registryDir()): void {
  write({ kind: "root", root, ...owned() }, dir);
}

export function unregisterPid(pid: number, dir = registryDir()): void {
  rmSync(fileOf({ kind: "pid", pid }, dir), { force: true });
  dropIfEmpty(dir);
}

export function unregisterRoot(root: string, dir = registryDir()): void {
  rmSync(fileOf({ kind: "root", root }, dir), { force: true });
  dropIfEmpty(dir);
}

/**
 * Outside a test run (a benchmark, a script) the registry is a folder of the system temp dir: it goes
 * once its last entry has, so nothing is left there. A run's own registry is its global setup's to remove.
 */
function dropIfEmpty(dir: string): void {
  if (process.env.OCC_TEST_REGISTRY) return;
  try {
    rmdirSync(dir);
  } catch {
    // Not empty (another process's entries), or gone already.
  }
}

function write(entry: Entry, dir: string): void {
  for (let attempt = 1; ; attempt++) {
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(fileOf(entry, dir), JSON.stringify(entry));
      return;
    } catch (error) {
      // Another process dropped the folder as it emptied (dropIfEmpty) between the two calls.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= 3) throw error;
    }
  }
}

export function readEntries(dir = registryDir()): Entry[] {
  if (!existsSync(dir)) return [];
  const entries: Entry[] = [];
  for (const name of readdirSync(dir)) {
    try {
      entries.push(JSON.parse(readFileSync(join(dir, name), "utf8")) as Entry);
    } catch {
      rmSync(join(dir, name), { force: true }); // half-written or foreign: useless
    }
  }
  return entries;
}

/** The first *.test.ts file on the current call stack, if any. */
export function callerTestFile(): string | undefined {
  const stack = new Error().stack ?? "";
  const match = /((?:file:\/\/)?\/[^\s():]+\.(?:test|spec)\.[cm]?[jt]s)/.exec(stack);
  return match?.[1]?.replace(/^file:\/\//, "");
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    // A zombie answers kill(0) but is already dead.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true; // no /proc (not Linux): trust kill(0)
  }
}

/** True when `pid` is alive and its command line still contains `command`. */
export function isOurProcess(pid: number, command: string): boolean {
  if (!isAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(command);
  } catch {
    return true; // no /proc: cannot tell, assume it is
  }
}

function killHard(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL"); // spawnOpencode starts it as a group leader
  } catch {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/**
 * Settle every entry `select` picks: kill its process if alive, remove its root and the entry.
 * Returns one line per entry that was still there (a leak).
 */
export function sweep(select: (e: Entry) => boolean, dir = registryDir()): string[] {
  const problems: string[] = [];
  const entries = readEntries(dir).filter(select);
  // Processes first, so their roots are no longer being written to.
  for (const e of entries) {
    if (e.kind !== "pid") continue;
    const running = isOurProcess(e.pid, e.command);
    if (running) killHard(e.pid);
    problems.push(`leaked opencode server pid ${e.pid} started by ${e.startedBy} (${running ? "was still running: killed" : "never stopped; already exited"})`);
    unregisterPid(e.pid, dir);
  }
  for (const e of entries) {
    if (e.kind !== "root") continue;
    if (existsSync(e.root)) {
      problems.push(`leaked temp root ${e.root} created by ${e.startedBy} (removed now)`);
      rmSync(e.root, { recursive: true, force: true, maxRetries: 3 });
    }
    unregisterRoot(e.root, dir);
  }
  return problems;
}

/** Entries written by this process or by its direct children (vitest workers). */
export const ownedBy = (pid: number) => (e: Entry) => e.owner === pid || e.ownerParent === pid;

/** Entries whose writer and its parent are both gone: left by a crashed earlier run. */
export const orphaned = (e: Entry) => !isAlive(e.owner) && !isAlive(e.ownerParent);

export function removeRegistryDirIfEmpty(dir = registryDir()): void {
  try {
    rmdirSync(dir); // only succeeds when empty, so another run's entries are safe
  } catch {
    // not empty, or already gone
  }
}
