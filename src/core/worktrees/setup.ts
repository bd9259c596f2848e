// A worktree's `setup` command (e.g. `npm ci`): the caller's own shell line, run in the fresh
// worktree before the agent starts, exactly like a check (its own process group, killed at the time
// limit, the end of its output kept). A failure ends the task before any session exists.
import { runCheck, type CheckRun } from "../governance/checks.js";

export const SETUP_TIMEOUT_MS = 15 * 60_000;

export interface SetupRun {
  command: string;
  /** Exit code; null when it was killed (time limit or signal). */
  exit: number | null;
  timedOut?: boolean;
  /** The end of its combined output (failures only). */
  output?: string;
}

/** Thrown when `setup` fails: the task ends as an error with the command's output. */
export class SetupError extends Error {
  override name = "SetupFailed";
  constructor(readonly run: SetupRun) {
    const how = run.timedOut ? "did not finish in time and was stopped" : `exited ${run.exit ?? "on a signal"}`;
    super(`The worktree's setup \`${run.command.slice(0, 200)}\` ${how}; the agent was not started.\n${run.output || "(no output)"}`);
  }
}

export async function runSetup(command: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs = SETUP_TIMEOUT_MS): Promise<SetupRun> {
  const run: CheckRun = await runCheck(command, cwd, 0, timeoutMs, env);
  const { round: _round, passed, ...rest } = run;
  if (!passed) throw new SetupError(rest);
  return rest;
}
