// Whether a process is running, from its pid alone. Its own file so that the discovery of running
// servers (discover.ts) and of the 2.x service (service/discover.ts) can both use it without an
// import circle.
import { readFileSync } from "node:fs";

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
