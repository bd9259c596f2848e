// Gates: shell commands that must pass after an agent's turn before the task counts as done. A
// command is the caller's own string (like a CI step), run with `sh -c` in the task's directory, in
// its own process group so a timeout kills what it started too. It gets the process environment
// minus the conductor's own secrets, whose output would otherwise reach the model.
import { spawn } from "node:child_process";

export const DEFAULT_MAX_ROUNDS = 3;
export const DEFAULT_CHECK_TIMEOUT_MS = 300_000;
/** Output kept per check (its end: that is where test runners put the failures). */
const KEEP_CHARS = 4_000;
const SECRET_ENV = ["OPENCODE_PASSWORD", "OPENCODE_SERVER_PASSWORD", "OPENCODE_CONDUCTOR_HTTP_TOKEN"];

export interface CheckRun {
  round: number;
  command: string;
  passed: boolean;
  /** Exit code; null when it was killed (timeout or signal). */
  exit: number | null;
  timedOut?: boolean;
  /** Trimmed combined output (the last ~4 kB), for failed checks. */
  output?: string;
}

export async function runCheck(
  command: string,
  cwd: string,
  round: number,
  timeoutMs = DEFAULT_CHECK_TIMEOUT_MS,
  baseEnv: NodeJS.ProcessEnv = process.env,
): Promise<CheckRun> {
  const env = { ...baseEnv };
  for (const name of SECRET_ENV) delete env[name];
  return new Promise((resolve) => {
    let out = "";
    let timedOut = false;
    const keep = (chunk: Buffer) => {
      out = (out + chunk.toString("utf8")).slice(-KEEP_CHARS * 2);
    };
    const child = spawn("sh", ["-c", command], { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const finish = (exit: number | null, extra = "") => {
      clearTimeout(timer);
      const text = clip(`${out}${extra}`.trim());
      const passed = exit === 0 && !timedOut;
      resolve({ round, command, passed, exit: timedOut ? null : exit, ...(timedOut ? { timedOut } : {}), ...(passed ? {} : { output: text }) });
    };
    child.on("error", (error) => finish(null, `\n${error.message}`));
    child.on("close", (code) => finish(code));
  });
}

/** Runs the checks one after another (they may share files, e.g. a build then its tests). */
export async function runChecks(commands: string[], cwd: string, round: number, timeoutMs?: number, env?: NodeJS.ProcessEnv): Promise<CheckRun[]> {
  const runs: CheckRun[] = [];
  for (const command of commands) runs.push(await runCheck(command, cwd, round, timeoutMs, env));
  return runs;
}

/** What the agent is told when checks fail. */
export function failureMessage(failed: CheckRun[], timeoutMs = DEFAULT_CHECK_TIMEOUT_MS): string {
  const parts = failed.map((c) => {
    const how = c.timedOut ? `timed out after ${+(timeoutMs / 1000).toFixed(1)} s` : `failed (exit ${c.exit ?? "killed"})`;
    return `The check \`${c.command}\` ${how}:\n${c.output || "(no output)"}`;
  });
  return `${parts.join("\n\n")}\nFix it.`;
}

function clip(text: string): string {
  return text.length > KEEP_CHARS ? `…${text.slice(-KEEP_CHARS)}` : text;
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}
