// Which processes are opencode, and whether a process still lives.
import { execFileSync } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import { basename } from "node:path";

/** True for an opencode binary or a runtime (bun/node) running opencode's entry point. */
export function isOpencodeCommand(argv: readonly string[], exe?: string): boolean {
  const isBinary = (p: string | undefined) => p !== undefined && /^\.?opencode(\.exe)?$/i.test(basename(p));
  if (isBinary(argv[0]) || isBinary(exe)) return true;
  const runtime = basename(argv[0] ?? "");
  if (!/^(bun|node|bunx|npx)(\.exe)?$/i.test(runtime)) return false;
  // `bun run packages/opencode/src/index.ts serve` (a source checkout) or `node …/bin/opencode`.
  return argv.slice(1).some((a) => isBinary(a) || /(^|\/)packages\/opencode\/src\/index\.ts$/.test(a));
}

/** The process's argv (Linux: /proc; elsewhere: `ps`, split on spaces), or undefined when gone. */
export function processArgv(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" || process.platform === "linux") return undefined;
  }
  return psArgv(pid);
}

function psArgv(pid: number): string[] | undefined {
  try {
    // Synchronous on purpose: used from the exit path and from stale-row checks.
    const out = execFileSync("ps", ["-o", "command=", "-p", String(pid)], { encoding: "utf8", timeout: 2000 }).trim();
    return out ? out.split(/\s+/) : undefined;
  } catch {
    return undefined;
  }
}

/** Alive (signal 0 succeeds, or EPERM) and not a zombie. */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

/** Start time of a process (Linux, clock ticks since boot), to detect pid reuse. */
export function processStartTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces): state is field 3, starttime 22.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const value = Number(fields[19]);
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `pid` is alive and, when its start time was noted, still the same process (pids get reused). */
export function isSameProcess(pid: number, startTime: number | undefined): boolean {
  if (!isProcessAlive(pid)) return false;
  if (startTime === undefined) return true;
  const now = processStartTime(pid);
  return now === undefined || now === startTime;
}

/** Alive and its command line is opencode's: checked before killing anything (pids get reused). */
export function isOpencodeProcess(pid: number): boolean {
  if (!isProcessAlive(pid)) return false;
  const argv = processArgv(pid);
  if (!argv) return false;
  let exe: string | undefined;
  try {
    exe = readlinkSync(`/proc/${pid}/exe`);
  } catch {
    exe = undefined;
  }
  return isOpencodeCommand(argv, exe);
}
