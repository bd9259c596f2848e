// What a later start cleans up: the unfinished tasks of a conductor that died (their worktrees, and
// a branch made just before the crash), folders no row names; finished tasks keep their branches.
// And the TTL: a finished task's checkout goes, its branch stays.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanStale, reapFinished } from "../../../../src/core/worktrees/cleanup.js";
import { Worktrees } from "../../../../src/core/worktrees/worktrees.js";
import { makeRepo, userSide, type TestRepo } from "../../../support/git-repo.js";

let r: TestRepo;
let wt: Worktrees;

beforeEach(async () => {
  r = await makeRepo("occ-wt-clean-");
  wt = new Worktrees({ stateDir: join(r.root, "state") });
});
afterEach(async () => {
  wt.close();
  await r.close();
});

/** The pid of a process that has exited (a conductor that is gone). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.on("exit", resolve));
  return child.pid!;
}

const branches = async () => (await r.git("branch", "--list", "conductor/*", "--format=%(refname:short)")).split("\n").filter(Boolean).sort();
const worktreePaths = async () => (await r.git("worktree", "list", "--porcelain")).split("\n").flatMap((l) => (l.startsWith("worktree ") ? [l.slice(9)] : []));

async function finished(id: string, file: string): Promise<string> {
  const open = await wt.open({ directory: r.repo });
  await wt.started(open.id, id);
  await writeFile(join(open.path, file), `${id}\n`);
  await wt.finish(open.id, { title: id, task: id });
  return open.id;
}

describe("after a conductor died", () => {
  it("removes its unfinished tasks' worktrees and branches, keeps finished tasks' branches, and removes unlisted folders", async () => {
    const before = await userSide(r);
    const done = await finished("ses_done", "done.txt");
    const running = await wt.open({ directory: r.repo });
    await wt.started(running.id, "ses_running");
    // It crashed right after making the branch, before the row said so.
    await r.git("branch", "conductor/ses_running", "HEAD");
    const creating = await wt.open({ directory: r.repo });
    const dead = await deadPid();
    for (const id of [done, running.id, creating.id]) await wt.registry.update(id, { ownerPid: dead, ownerStartTime: 1 });
    // A folder no row names (a crash between steps of another conductor).
    await r.git("worktree", "add", "--detach", "-q", join(r.root, "state", "worktrees", "stray"), "HEAD");

    const cleanup = await cleanStale(wt.registry, 3600_000);
    expect(cleanup.abandoned.sort()).toEqual([running.id, creating.id].sort());
    expect(cleanup.orphans).toEqual(["stray"]);
    expect(existsSync(running.path)).toBe(false);
    expect(existsSync(creating.path)).toBe(false);
    expect(await branches()).toEqual(["conductor/ses_done"]);
    // Every worktree left is the user's or a listed task's.
    const rows = await wt.registry.read();
    expect(rows.map((row) => row.id)).toEqual([done]);
    expect((await worktreePaths()).sort()).toEqual([r.repo, rows[0]!.path].sort());
    expect(await userSide(r)).toEqual(before);
  });

  it("leaves a live conductor's unfinished tasks alone", async () => {
    const running = await wt.open({ directory: r.repo });
    await wt.started(running.id, "ses_live");
    const cleanup = await cleanStale(wt.registry, 3600_000);
    expect(cleanup).toEqual({ abandoned: [], reaped: [], orphans: [] });
    expect(existsSync(running.path)).toBe(true);
  });

  it("forgets tasks of a repository that is gone", async () => {
    await finished("ses_gone", "g.txt");
    const path = (await wt.registry.read())[0]!.path;
    await wt.registry.update((await wt.registry.read())[0]!.id, { repo: join(r.root, "moved-away.git") });
    await cleanStale(wt.registry, 3600_000);
    expect(await wt.registry.read()).toEqual([]);
    expect(existsSync(path)).toBe(false);
  });
});

describe("the TTL", () => {
  it("removes finished checkouts past it; the branch stays on record, a task without one is forgotten", async () => {
    const changed = await finished("ses_changed", "c.txt");
    const open = await wt.open({ directory: r.repo });
    await wt.started(open.id, "ses_same");
    await wt.finish(open.id, { title: "same", task: "same" });
    const running = await wt.open({ directory: r.repo });

    const { reaped } = await reapFinished(wt.registry, 60_000, Date.now() + 61_000);
    expect(reaped.sort()).toEqual([changed, open.id].sort());
    const rows = await wt.registry.read();
    expect(rows.map((row) => row.id).sort()).toEqual([changed, running.id].sort());
    const kept = rows.find((row) => row.id === changed)!;
    expect(kept.checkoutRemovedAt).toBeDefined();
    expect(existsSync(kept.path)).toBe(false);
    expect(existsSync(running.path)).toBe(true);
    expect(await branches()).toEqual(["conductor/ses_changed"]);
    // The branch can still be merged and removed.
    expect((await wt.merge(["ses_changed"], "integration")).outcomes[0]).toMatchObject({ result: "fast-forward" });
    expect(await wt.remove("ses_changed")).toMatchObject({ checkoutRemoved: false, branchResult: "deleted" });
    expect(await branches()).toEqual([]);
  });

  it("forgets a reaped task whose branch was deleted by hand", async () => {
    const id = await finished("ses_hand", "h.txt");
    await reapFinished(wt.registry, 0);
    expect((await wt.registry.get(id))?.checkoutRemovedAt).toBeDefined();
    await r.git("branch", "-D", "conductor/ses_hand");
    await reapFinished(wt.registry, 0);
    expect(await wt.registry.read()).toEqual([]);
  });
});

it("the worktree root holds nothing but listed worktrees after the service cleans up", async () => {
  await mkdir(join(r.root, "state", "worktrees", "leftover"), { recursive: true });
  await wt.cleanStale();
  expect(existsSync(join(r.root, "state", "worktrees", "leftover"))).toBe(false);
});
