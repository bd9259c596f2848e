// Processes that outlived the test run: any process whose environment names the run folder (its
// HOME, TMPDIR or a temp dir below them: every process a test starts gets one) and that is not the
// runner or one of its workers. The pid registry only knows what a test registered; this finds an
// orphan nobody registered (a CLI's child that lived on after the CLI was killed).
import { readFileSync } from "node:fs";
import { describeProcesses, killAll, processTable, processTree, type ProcessInfo } from "./process-tree.js";

/** The environment of `pid` (/proc/<pid>/environ, as it was at exec), or undefined when unreadable or gone. */
function environment(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
  } catch {
    return undefined;
  }
}

/** Live processes outside `runner`'s tree whose environment holds a value under `root`. */
export function strays(root: string, runner = process.pid): ProcessInfo[] {
  const table = processTable();
  const own = new Set(processTree(runner, table).map((p) => p.pid));
  const under = (value: string) => value === root || value.startsWith(`${root}/`);
  return table.filter((p) => {
    if (own.has(p.pid)) return false;
    return (environment(p.pid) ?? []).some((entry) => under(entry.slice(entry.indexOf("=") + 1)));
  });
}

/**
 * The strays of `root` that are still there after `graceMs` (a helper such as esbuild's service
 * exits by itself once its parent's pipe closes, a moment after the parent), SIGKILLed, one line
 * each naming what they were; none: an empty list.
 */
export async function sweepStrays(root: string, runner = process.pid, graceMs = 10_000): Promise<string[]> {
  const deadline = Date.now() + graceMs;
  let found = strays(root, runner);
  // Process exits of processes that are not our children cannot be subscribed to: poll /proc.
  while (found.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    found = strays(root, runner);
  }
  // Named before the kill: a dead process has no command line to read.
  const lines = found.map((p) => `${describeProcesses([p])}: ${commandLine(p.pid)}`);
  killAll(found);
  return lines;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim().slice(0, 200);
  } catch {
    return "(gone)";
  }
}
