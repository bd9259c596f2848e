// Git repositories for the worktree tests: a temp root with a repo of a few files, git commands that
// run there with a fixed identity and no machine config, and a fingerprint of the user's side (HEAD,
// branch, status, and the bytes of every file) to prove a worktree task never touched it.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { promisify } from "node:util";
import { createProjectDir } from "./project-dir.js";
import { registerRoot, unregisterRoot } from "./registry.js";

const run = promisify(execFile);

export type Git = (...args: string[]) => Promise<string>;

/** git in `repo`, with a fixed identity, a private HOME and no system config. */
export function gitAt(repo: string, home: string): Git {
  return async (...args) =>
    (
      await run("git", ["-c", "user.email=test@example.invalid", "-c", "user.name=occ test", "-c", "commit.gpgsign=false", ...args], {
        cwd: repo,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, GIT_CONFIG_NOSYSTEM: "1" },
        maxBuffer: 64 * 1024 * 1024,
      })
    ).stdout;
}

/** Writes `files` into the repository and commits them. */
export async function commitFiles(repo: string, git: Git, files: Record<string, string>, message = "files"): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(repo, name)), { recursive: true });
    await writeFile(join(repo, name), text);
  }
  await git("add", "-A");
  await git("commit", "-q", "-m", message);
}

export interface TestRepo {
  root: string;
  repo: string;
  home: string;
  git: Git;
  close(): Promise<void>;
}

export async function makeRepo(prefix = "occ-wt-", files: Record<string, string> = { "shared.txt": "base\n" }): Promise<TestRepo> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  registerRoot(root);
  const home = join(root, "home");
  const repo = await createProjectDir(root, "repo", { gitInit: true, home });
  const git = gitAt(repo, home);
  await commitFiles(repo, git, files);
  return {
    root,
    repo,
    home,
    git,
    close: async () => {
      await rm(root, { recursive: true, force: true });
      unregisterRoot(root);
    },
  };
}

export interface UserSide {
  head: string;
  branch: string;
  status: string;
  files: string;
}

/** HEAD, branch, `git status --porcelain` and a hash of every file's bytes outside .git. */
export async function userSide(r: Pick<TestRepo, "repo" | "git">): Promise<UserSide> {
  const hash = createHash("sha256");
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name === ".git") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else hash.update(`${relative(r.repo, path)}\0`).update(await readFile(path));
    }
  };
  await walk(r.repo);
  return {
    head: (await r.git("rev-parse", "HEAD")).trim(),
    branch: (await r.git("symbolic-ref", "--short", "HEAD")).trim(),
    status: await r.git("status", "--porcelain"),
    files: hash.digest("hex"),
  };
}
