// `repo` tasks: the worker keeps a bare cache of each repository under its workspace, checks the
// task's ref out into a fresh worktree per attempt (a retry never builds on a lost attempt's
// files), and afterwards reads the patch against that ref. Pushing `conductor/<task-id>` is done
// here, by the worker with its own git credentials; the agent's session keeps its guard rails.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { RepoOutcome } from "./outcome.js";
import type { RepoSource } from "./spec.js";

const run = promisify(execFile);
const GIT_TIMEOUT_MS = 10 * 60_000;
/** A patch longer than this is cut (the files list stays complete); the branch holds all of it. */
const MAX_PATCH_CHARS = 2_000_000;

async function git(cwd: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run("git", args, { cwd, timeout: GIT_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
    return stdout;
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`git ${args[0]} failed: ${(e.stderr || e.message).trim().slice(0, 400)}`, { cause: error });
  }
}

export interface Checkout {
  directory: string;
  base: string;
  cache: string;
}

/** A fresh worktree of `repo.ref` for attempt `n` of the task. */
export async function checkoutRepo(workspace: string, repo: RepoSource, taskId: string, n: number): Promise<Checkout> {
  const cache = join(workspace, "repos", `${createHash("sha256").update(repo.url).digest("hex").slice(0, 16)}.git`);
  await mkdir(join(workspace, "repos"), { recursive: true });
  if (!(await stat(cache).catch(() => undefined))) {
    await git(workspace, ["clone", "--bare", "--quiet", repo.url, cache]);
  } else {
    await git(cache, ["fetch", "--quiet", "--prune", "--force", repo.url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"]);
  }
  const ref = repo.ref ?? "HEAD";
  const base = (await git(cache, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]).catch(() => "")).trim();
  if (!base) throw new Error(`The repository ${repo.url.slice(0, 200)} has no ref ${ref.slice(0, 100)}.`);
  const directory = join(workspace, "tasks", `${taskId}-${n}`);
  await rm(directory, { recursive: true, force: true });
  await git(cache, ["worktree", "prune"]);
  await git(cache, ["worktree", "add", "--quiet", "--detach", directory, base]);
  return { directory, base, cache };
}

/** An earlier attempt's worktree (a re-attached session works in it), to collect its patch. */
export async function adoptCheckout(directory: string, base: string): Promise<Checkout> {
  const cache = (await git(directory, ["rev-parse", "--path-format=absolute", "--git-common-dir"])).trim();
  return { directory, base, cache };
}

/** The worktree's changes against the base (new files included), optionally pushed as a branch. */
export async function collectRepo(checkout: Checkout, repo: RepoSource, taskId: string, title: string): Promise<RepoOutcome> {
  const dir = checkout.directory;
  await git(dir, ["add", "-A"]);
  const full = await git(dir, ["diff", "--cached", "--binary", checkout.base]);
  const files = (await git(dir, ["diff", "--cached", "--name-only", checkout.base])).split("\n").filter(Boolean);
  const patch = full.length > MAX_PATCH_CHARS ? `${full.slice(0, MAX_PATCH_CHARS)}\n… (patch cut at ${MAX_PATCH_CHARS} characters)` : full;
  const out: RepoOutcome = { url: repo.url, base: checkout.base, patch, files };
  if (repo.push && files.length > 0) {
    const branch = `conductor/${taskId}`;
    try {
      const who = ["-c", "user.name=opencode-conductor", "-c", "user.email=opencode-conductor@localhost"];
      await git(dir, [...who, "commit", "--quiet", "--no-verify", "-m", `${title.slice(0, 72)}\n\nopencode-conductor task ${taskId}`]);
      await git(dir, ["push", "--quiet", repo.url, `HEAD:refs/heads/${branch}`]);
      Object.assign(out, { branch, pushed: true });
    } catch (error) {
      Object.assign(out, { branch, pushed: false, pushError: (error as Error).message });
    }
  }
  return out;
}

/** Removes the attempt's worktree (the patch is in the result; the cache stays for the next task). */
export async function removeCheckout(checkout: Checkout): Promise<void> {
  await git(checkout.cache, ["worktree", "remove", "--force", checkout.directory]).catch(() => rm(checkout.directory, { recursive: true, force: true }));
}
