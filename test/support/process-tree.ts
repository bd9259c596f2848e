// The processes a test started, as the kernel sees them (/proc): a process, everything below it,
// and everything in the process groups of those (a detached supervisor leads its own group, and a
// helper can leave its parent's tree but not its group). Taken before a kill, so that afterwards
// a test can check that each of them is gone, not one pid.
import { readdirSync, readFileSync } from "node:fs";

export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** Clock ticks after boot at which it started: with the pid, it names one process (pids are reused). */
  startTime: number;
  /** The command name (/proc/<pid>/comm), for the failure message. */
  command: string;
}

/** /proc/<pid>/stat: "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses. */
export function parseStat(line: string): ProcessInfo | undefined {
  const open = line.indexOf("(");
  const close = line.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const fields = line.slice(close + 2).split(" ");
  // fields[0] is the state; a zombie has exited (only its parent has not reaped it yet).
  if (fields[0] === "Z" || fields[0] === "X") return undefined;
  return {
    pid: Number(line.slice(0, open)),
    command: line.slice(open + 1, close),
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    startTime: Number(fields[19]),
  };
}

function read(pid: number): ProcessInfo | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined; // gone
  }
}

/** Every live process on the machine. */
export function processTable(): ProcessInfo[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => read(Number(name)) ?? []);
}

/**
 * `root` and its descendants, and every member of a process group one of them leads (a helper
 * reparented away keeps its group). `root`'s own group is not followed unless `root` leads it:
 * that is the test runner's.
 */
export function processTree(root: number, table: ProcessInfo[] = processTable()): ProcessInfo[] {
  const tree = new Map<number, ProcessInfo>();
  const self = table.find((p) => p.pid === root);
  if (!self) return [];
  tree.set(root, self);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of table) {
      if (tree.has(p.pid)) continue;
      const child = tree.has(p.ppid);
      // A group led by a process of the tree: the members are its helpers, wherever they were reparented.
      const grouped = (p.pgid !== self.pgid || self.pgid === root) && tree.has(p.pgid);
      if (child || grouped) {
        tree.set(p.pid, p);
        grew = true;
      }
    }
  }
  return [...tree.values()];
}

/** Those of `processes` that still run (same pid, same start time). */
export function stillRunning(processes: ProcessInfo[]): ProcessInfo[] {
  return processes.filter((p) => read(p.pid)?.startTime === p.startTime);
}

export const describeProcesses = (processes: ProcessInfo[]) => processes.map((p) => `${p.pid} ${p.command} (parent ${p.ppid}, group ${p.pgid})`).join(", ");

/** Waits (bounded) until none of `processes` runs; returns those still running at the ceiling. */
export async function untilGone(processes: ProcessInfo[], ceilingMs: number): Promise<ProcessInfo[]> {
  const deadline = Date.now() + ceilingMs;
  // Process exits of processes that are not our children cannot be subscribed to: poll /proc.
  while (stillRunning(processes).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return stillRunning(processes);
}

/** The process tree under `root` once it holds a process `wanted` picks (bounded wait: /proc has no events). */
export async function treeWith(root: number, wanted: (p: ProcessInfo) => boolean, ceilingMs = 60_000): Promise<ProcessInfo[]> {
  const deadline = Date.now() + ceilingMs;
  for (;;) {
    const tree = processTree(root);
    if (tree.some(wanted)) return tree;
    if (Date.now() > deadline) throw new Error(`no such process under ${root} after ${ceilingMs} ms; the tree: ${describeProcesses(tree)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** SIGKILLs whichever of `processes` still runs (a test's cleanup after a failure). */
export function killAll(processes: ProcessInfo[]): void {
  for (const p of stillRunning(processes)) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}
