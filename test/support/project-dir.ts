// Project directories for tests: plain, or a git repo with one commit (opencode needs git for
// per-turn diffs, snapshots and revert, docs/opencode-behaviour.md §7). Git runs with a private HOME and no system
// config, so the machine's git settings never leak in.
import { execFile } from "node:child_process";
import { mkdir, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export async function createProjectDir(parent: string, name: string, options: { gitInit?: boolean; home: string }): Promise<string> {
  if (!/^[\w.-]+$/.test(name) || name === "." || name === "..") throw new Error(`project dir name must be a plain name, got ${JSON.stringify(name)}`);
  const dir = join(parent, name);
  await mkdir(dir);
  if (options.gitInit) await gitInit(dir, options.home);
  return realpath(dir); // opencode reports real paths (e.g. macOS /var -> /private/var)
}

async function gitInit(dir: string, home: string): Promise<void> {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, GIT_CONFIG_NOSYSTEM: "1" };
  const git = (...args: string[]) =>
    run("git", ["-c", "user.email=test@example.invalid", "-c", "user.name=occ test", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", ...args], {
      cwd: dir,
      env,
    });
  await writeFile(join(dir, "README.md"), "# test project\n");
  await git("init", "-q");
  await git("add", "README.md");
  await git("commit", "-q", "-m", "initial commit");
}
