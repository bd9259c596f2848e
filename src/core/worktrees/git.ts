// The one way this folder runs git: the git CLI with an argument list (never a shell string), a time
// limit, bounded output, no prompt, and none of the user's hooks or fsmonitor (they could run
// anything, or start daemons, on every call). Variables that would point git at another repository
// (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE …, set when the conductor itself runs inside a git hook)
// are dropped, and messages are in the C locale so they read the same everywhere.
import { spawn } from "node:child_process";

const DEFAULT_TIMEOUT_MS = 120_000;
/** Enough for any answer but a patch; callers reading a patch give their own cap. */
const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;
const MAX_STDERR = 16 * 1024;

/** Always first on the command line: the user's hooks and fsmonitor stay out of our calls. */
const SAFE_CONFIG = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "gc.auto=0"];

const LOCATING = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
];

export class GitError extends Error {
  override name = "GitError";
  constructor(
    message: string,
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}

export interface GitOptions {
  timeoutMs?: number;
  /** Stdout past this is dropped and `truncated` set (the command still runs to its end). */
  maxBytes?: number;
  /** Exit codes that are answers, not failures (e.g. 1 for `merge-tree` conflicts). Default [0]. */
  okCodes?: number[];
  /** Added to the environment (e.g. the committer's identity). */
  env?: Record<string, string>;
  /** Written to the command's stdin (e.g. a pathspec list); stdin is closed otherwise. */
  input?: string;
}

export interface GitResult {
  stdout: string;
  code: number;
  truncated: boolean;
}

export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of LOCATING) delete env[name];
  return { ...env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", LANGUAGE: "C", ...extra };
}

/** Runs `git <args>` in `cwd`; a failure (exit code not in okCodes, timeout, no git) is a GitError naming the command. */
export function git(cwd: string, args: string[], o: GitOptions = {}): Promise<GitResult> {
  const maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const okCodes = o.okCodes ?? [0];
  const what = `git ${args.slice(0, 3).join(" ")}`;
  return new Promise((resolve, reject) => {
    const child = spawn("git", [...SAFE_CONFIG, ...args], { cwd, env: gitEnv(o.env), stdio: [o.input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    if (o.input !== undefined) {
      child.stdin?.on("error", () => undefined); // a git that exits early closes it: its exit code tells
      child.stdin?.end(o.input);
    }
    const out: Buffer[] = [];
    let outBytes = 0;
    let truncated = false;
    let stderr = "";
    let timedOut = false;
    child.stdout!.on("data", (chunk: Buffer) => {
      if (outBytes >= maxBytes) return void (truncated = true);
      const room = maxBytes - outBytes;
      if (chunk.length > room) truncated = true;
      out.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      outBytes += Math.min(chunk.length, room);
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR) stderr += chunk.toString("utf8").slice(0, MAX_STDERR - stderr.length);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new GitError(`${what} could not run: ${error.message} (is git installed and on PATH?)`, null, ""));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString("utf8");
      if (timedOut) return reject(new GitError(`${what} did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped.`, code, stderr));
      if (code === null || !okCodes.includes(code)) {
        const detail = stderr.trim().split("\n").slice(-6).join("\n").slice(0, 800);
        return reject(new GitError(`${what} failed (exit ${code ?? "signal"})${detail ? `: ${detail}` : ""}`, code, stderr));
      }
      resolve({ stdout, code, truncated });
    });
  });
}

/** The trimmed stdout of a git call that answers one line. */
export async function gitLine(cwd: string, args: string[], o?: GitOptions): Promise<string> {
  return (await git(cwd, args, o)).stdout.trim();
}

/** The commit `rev` names in `cwd`, or undefined when it names none. */
export async function resolveCommit(cwd: string, rev: string): Promise<string | undefined> {
  if (rev.startsWith("-")) return undefined; // never an option
  const r = await git(cwd, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`], { okCodes: [0, 1, 128] });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/** `refs/heads/<name>`'s commit, or undefined when there is no such branch. */
export async function branchCommit(cwd: string, name: string): Promise<string | undefined> {
  const r = await git(cwd, ["rev-parse", "--verify", "--quiet", `refs/heads/${name}`], { okCodes: [0, 1, 128] });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/** A branch name git accepts (checked by git itself). */
export async function isValidBranchName(cwd: string, name: string): Promise<boolean> {
  if (!name || name.startsWith("-")) return false;
  const r = await git(cwd, ["check-ref-format", "--branch", name], { okCodes: [0, 1, 128] });
  return r.code === 0;
}

/** True when `ancestor` is `descendant` or one of its ancestors. */
export async function isAncestor(cwd: string, ancestor: string, descendant: string): Promise<boolean> {
  const r = await git(cwd, ["merge-base", "--is-ancestor", ancestor, descendant], { okCodes: [0, 1] });
  return r.code === 0;
}

/** The identity of commits the conductor makes (the agent's work, and merges asked for). */
export const CONDUCTOR_IDENTITY: Record<string, string> = {
  GIT_AUTHOR_NAME: "opencode-conductor",
  GIT_AUTHOR_EMAIL: "opencode-conductor@localhost",
  GIT_COMMITTER_NAME: "opencode-conductor",
  GIT_COMMITTER_EMAIL: "opencode-conductor@localhost",
};
