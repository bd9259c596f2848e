// The worktree layer on real git repositories (no opencode): a task's worktree, its setup, the
// commit and branch at its end, what it reports, and its removal, with the user's checkout
// fingerprinted before and after to show it was only read.
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SetupError } from "../../../../src/core/worktrees/setup.js";
import { Worktrees } from "../../../../src/core/worktrees/worktrees.js";
import { makeRepo, userSide, type TestRepo } from "../../../support/git-repo.js";

let r: TestRepo;
let wt: Worktrees;

beforeEach(async () => {
  r = await makeRepo("occ-wt-unit-", { "shared.txt": "base\n", "sub/inner.txt": "inner\n" });
  wt = new Worktrees({ stateDir: join(r.root, "state") });
});
afterEach(async () => {
  wt.close();
  await r.close();
});

async function branches(): Promise<string[]> {
  return (await r.git("for-each-ref", "--format=%(refname:short)", "refs/heads/")).split("\n").filter(Boolean).sort();
}

describe("a worktree task", () => {
  it("works in a detached worktree under the state dir, and ends as a branch holding only its change", async () => {
    const before = await userSide(r);
    const open = await wt.open({ directory: r.repo, title: "edit shared" });
    expect(open.path.startsWith(join(r.root, "state", "worktrees"))).toBe(true);
    expect(open.directory).toBe(open.path);
    expect(open.base).toBe(before.head);
    expect(open.env.CONDUCTOR_PORT).toBe(String(open.port));
    expect((await wt.registry.get(open.id))?.state).toBe("creating");
    await wt.started(open.id, "ses_one");
    await writeFile(join(open.directory, "shared.txt"), "one\ntwo\n");
    await writeFile(join(open.directory, "new.txt"), "fresh\n");
    const facts = await wt.finish(open.id, { title: "edit shared", task: "Change shared.txt" });

    expect(facts.branch).toBe("conductor/ses_one");
    expect(facts.changed).toBe(true);
    expect(facts.base).toBe(before.head);
    expect(facts.files).toEqual([
      { path: "new.txt", status: "added", additions: 1, deletions: 0 },
      { path: "shared.txt", status: "modified", additions: 2, deletions: 1 },
    ]);
    expect(facts.patch).toContain("+one\n+two\n");
    expect(facts.patch).toContain("+fresh");
    // The branch is what git says it is: one commit on the base with exactly those files.
    expect((await r.git("rev-parse", "conductor/ses_one")).trim()).toBe(facts.head);
    expect((await r.git("rev-parse", "conductor/ses_one~1")).trim()).toBe(before.head);
    expect((await r.git("diff", "--name-only", before.head, "conductor/ses_one")).split("\n").filter(Boolean)).toEqual(["new.txt", "shared.txt"]);
    expect(await r.git("log", "-1", "--format=%an%n%s", "conductor/ses_one")).toBe("opencode-conductor\nedit shared\n");
    expect(await userSide(r)).toEqual(before);
    expect((await wt.registry.get(open.id))?.state).toBe("finished");
  });

  it("runs at the same place in the repository when the directory is a subfolder", async () => {
    const open = await wt.open({ directory: join(r.repo, "sub") });
    expect(open.directory).toBe(join(open.path, "sub"));
    expect(await readFile(join(open.directory, "inner.txt"), "utf8")).toBe("inner\n");
  });

  it("starts from the base the caller names", async () => {
    const first = (await r.git("rev-parse", "HEAD")).trim();
    await writeFile(join(r.repo, "later.txt"), "later\n");
    await r.git("add", "later.txt");
    await r.git("commit", "-q", "-m", "later");
    const open = await wt.open({ directory: r.repo, base: first });
    expect(open.base).toBe(first);
    expect(existsSync(join(open.path, "later.txt"))).toBe(false);
    await expect(wt.open({ directory: r.repo, base: "no-such-ref" })).rejects.toThrow(/`base` "no-such-ref" names no commit/);
  });

  it("says so and makes no branch when nothing changed", async () => {
    const open = await wt.open({ directory: r.repo });
    await wt.started(open.id, "ses_idle");
    const facts = await wt.finish(open.id, { title: "look", task: "Only look" });
    expect(facts).toMatchObject({ changed: false, files: [], patch: "" });
    expect(facts.branch).toBeUndefined();
    expect(await branches()).toEqual(["main"]);
  });

  it("keeps a commit the agent made itself, and what it left uncommitted on top", async () => {
    const open = await wt.open({ directory: r.repo });
    await wt.started(open.id, "ses_commits");
    const inWorktree = (...args: string[]) => r.git("-C", open.path, ...args);
    await writeFile(join(open.path, "a.txt"), "a\n");
    await inWorktree("add", "a.txt");
    await inWorktree("commit", "-q", "-m", "agent's own commit");
    await writeFile(join(open.path, "b.txt"), "b\n");
    const facts = await wt.finish(open.id, { title: "two files", task: "Add a and b" });
    expect(facts.files.map((f) => f.path)).toEqual(["a.txt", "b.txt"]);
    expect(await r.git("log", "--format=%s", `${facts.base}..conductor/ses_commits`)).toBe("two files\nagent's own commit\n");
  });

  it("refuses a directory outside git, and one in a repository without a commit", async () => {
    const plain = join(r.root, "plain");
    await mkdir(plain);
    await expect(wt.open({ directory: plain })).rejects.toThrow(/not inside a git work tree/);
    await r.git("init", "-q", join(r.root, "empty"));
    await expect(wt.open({ directory: join(r.root, "empty") })).rejects.toThrow(/has no commit yet/);
    expect(await wt.registry.read()).toEqual([]);
  });

  it("gives each task its own port", async () => {
    const opened = await Promise.all(Array.from({ length: 6 }, () => wt.open({ directory: r.repo })));
    expect(new Set(opened.map((o) => o.port)).size).toBe(6);
    expect(new Set(opened.map((o) => o.path)).size).toBe(6);
  });
});

describe("setup", () => {
  it("runs in the worktree with CONDUCTOR_PORT; what it leaves untracked is not the agent's work", async () => {
    const open = await wt.open({ directory: r.repo, setup: 'mkdir -p build && echo "$CONDUCTOR_PORT" > build/port && echo ready' });
    expect(open.setup).toMatchObject({ exit: 0 });
    expect((await readFile(join(open.path, "build", "port"), "utf8")).trim()).toBe(String(open.port));
    await wt.started(open.id, "ses_setup");
    await writeFile(join(open.path, "shared.txt"), "changed\n");
    const facts = await wt.finish(open.id, { title: "t", task: "t" });
    expect(facts.files.map((f) => f.path)).toEqual(["shared.txt"]);
  });

  it("that fails ends the task with its output and leaves no worktree or row", async () => {
    const before = await userSide(r);
    const error = await wt.open({ directory: r.repo, setup: "echo installing; echo 'no such package' >&2; exit 3" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SetupError);
    const e = error as SetupError;
    expect(e.run).toMatchObject({ exit: 3 });
    expect(e.message).toContain("exited 3");
    expect(e.message).toContain("no such package");
    expect(await wt.registry.read()).toEqual([]);
    expect(await r.git("worktree", "list", "--porcelain")).not.toContain("state/worktrees");
    expect(await readdir(join(r.root, "state", "worktrees"))).toEqual([]);
    expect(await userSide(r)).toEqual(before);
  });

  it("that runs too long is stopped", async () => {
    const error = (await wt.open({ directory: r.repo, setup: "sleep 30", setupTimeoutMs: 300 }).catch((e: unknown) => e)) as SetupError;
    expect(error.run).toMatchObject({ timedOut: true, exit: null });
    expect(error.message).toContain("did not finish in time");
  });
});

describe("the full patch and removal", () => {
  it("reads the whole patch past the preview's bound", async () => {
    const open = await wt.open({ directory: r.repo });
    await wt.started(open.id, "ses_big");
    await writeFile(join(open.path, "big.txt"), Array.from({ length: 3000 }, (_, i) => `line ${i} of a long file`).join("\n"));
    const facts = await wt.finish(open.id, { title: "big", task: "big" });
    expect(facts.patchTruncated).toBe(true);
    expect(facts.patch.length).toBe(20_000);
    const full = await wt.patch("ses_big");
    expect(full.truncated).toBe(false);
    expect(full.patch).toBe(await r.git("diff", "--binary", "--no-renames", "--no-color", facts.base, facts.head));
  });

  it("removes the checkout and the branch, and keeps a branch that has commits the task did not make", async () => {
    const a = await wt.open({ directory: r.repo });
    await wt.started(a.id, "ses_a");
    await writeFile(join(a.path, "a.txt"), "a\n");
    await wt.finish(a.id, { title: "a", task: "a" });
    const b = await wt.open({ directory: r.repo });
    await wt.started(b.id, "ses_b");
    await writeFile(join(b.path, "b.txt"), "b\n");
    await wt.finish(b.id, { title: "b", task: "b" });
    // Someone builds on b's branch: removing the task must not lose that commit.
    await r.git("-C", b.path, "checkout", "-q", "conductor/ses_b");
    await writeFile(join(b.path, "mine.txt"), "mine\n");
    await r.git("-C", b.path, "add", "mine.txt");
    await r.git("-C", b.path, "commit", "-q", "-m", "mine");
    await r.git("-C", b.path, "checkout", "-q", "--detach");

    expect(await wt.remove("ses_a")).toEqual({ sessionId: "ses_a", checkoutRemoved: true, branch: "conductor/ses_a", branchResult: "deleted" });
    expect(existsSync(a.path)).toBe(false);
    expect(await wt.remove("ses_b")).toMatchObject({ checkoutRemoved: true, branchResult: "kept" });
    expect(await branches()).toEqual(["conductor/ses_b", "main"]);
    expect((await wt.registry.read()).map((row) => row.sessionId)).toEqual(["ses_b"]);
    expect(await r.git("worktree", "list", "--porcelain")).not.toContain("state/worktrees");
    await expect(wt.remove("ses_a")).rejects.toThrow(/not a worktree task/);
  });

  it("refuses to remove a running task", async () => {
    const open = await wt.open({ directory: r.repo });
    await wt.started(open.id, "ses_busy");
    await expect(wt.remove("ses_busy")).rejects.toThrow(/still running/);
    await rm(open.path, { recursive: true, force: true });
  });
});
