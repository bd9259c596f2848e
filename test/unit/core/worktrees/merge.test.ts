// Bringing worktree tasks back: branches merged in order into a target, conflicts reported with
// their files and the tasks already merged that touched them, the target left as it was by a
// conflict, and a checked-out target fast-forwarded only when git can do it without losing anything.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MergeLandingError } from "../../../../src/core/worktrees/merge.js";
import { Worktrees } from "../../../../src/core/worktrees/worktrees.js";
import { makeRepo, userSide, type TestRepo } from "../../../support/git-repo.js";

let r: TestRepo;
let wt: Worktrees;

beforeEach(async () => {
  r = await makeRepo("occ-wt-merge-");
  wt = new Worktrees({ stateDir: join(r.root, "state") });
});
afterEach(async () => {
  wt.close();
  await r.close();
});

/** Finished tasks, the n-th writing `files(n)`. */
async function tasks(n: number, files: (i: number) => Record<string, string>): Promise<string[]> {
  const opened = await Promise.all(Array.from({ length: n }, () => wt.open({ directory: r.repo })));
  const ids: string[] = [];
  for (const [i, open] of opened.entries()) {
    const id = `ses_${String(i).padStart(2, "0")}`;
    await wt.started(open.id, id);
    for (const [name, text] of Object.entries(files(i))) await writeFile(join(open.path, name), text);
    await wt.finish(open.id, { title: `task ${i}`, task: `task ${i}` });
    ids.push(id);
  }
  return ids;
}

const treeOf = async (rev: string) => (await r.git("rev-parse", `${rev}^{tree}`)).trim();

describe("merging tasks' branches", () => {
  it("merges the first of twelve tasks on one file and reports the other eleven as conflicts naming it", async () => {
    const ids = await tasks(12, (i) => ({ "shared.txt": `task ${i}\n` }));
    const before = await userSide(r);
    const report = await wt.merge(ids, "integration");
    expect(report).toMatchObject({ into: "integration", created: true, landed: "ref" });
    expect(report.outcomes[0]).toMatchObject({ id: ids[0], result: "fast-forward" });
    for (const o of report.outcomes.slice(1))
      expect(o).toEqual({ id: o.id, branch: `conductor/${o.id}`, result: "conflict", files: ["shared.txt"], with: [ids[0]] });
    expect(await treeOf("integration")).toBe(await treeOf(`conductor/${ids[0]}`));
    // The user's checkout and branch were not touched; every task's branch is still there.
    expect(await userSide(r)).toEqual(before);
    expect((await r.git("branch", "--list", "conductor/*")).split("\n").filter(Boolean)).toHaveLength(12);
    expect((await wt.registry.bySession(ids[3]!))?.merge).toMatchObject({ into: "integration", result: "conflict", files: ["shared.txt"] });
  });

  it("merges twelve tasks on twelve files in one call", async () => {
    const ids = await tasks(12, (i) => ({ [`file-${i}.txt`]: `task ${i}\n` }));
    const report = await wt.merge(ids, "integration");
    expect(report.outcomes.map((o) => o.result)).toEqual(["fast-forward", ...Array(11).fill("merged")]);
    const files = (await r.git("ls-tree", "--name-only", "integration")).split("\n").filter(Boolean).sort();
    expect(files).toEqual([...Array.from({ length: 12 }, (_, i) => `file-${i}.txt`), "README.md", "shared.txt"].sort());
    for (let i = 0; i < 12; i++) expect(await r.git("show", `integration:file-${i}.txt`)).toBe(`task ${i}\n`);
    // A merge commit per task after the first, each with the task's branch as its second parent.
    expect((await r.git("rev-list", "--merges", "--count", "integration")).trim()).toBe("11");
    // Merging again changes nothing.
    const again = await wt.merge(ids, "integration");
    expect(again.landed).toBe("unchanged");
    expect(again.outcomes.every((o) => o.result === "already")).toBe(true);
  });

  it("names a task merged in an earlier call as the other side of a conflict", async () => {
    const ids = await tasks(2, (i) => ({ "shared.txt": `task ${i}\n` }));
    await wt.merge([ids[0]!], "integration");
    const report = await wt.merge([ids[1]!], "integration");
    expect(report.outcomes[0]).toMatchObject({ result: "conflict", files: ["shared.txt"], with: [ids[0]] });
    expect(report.landed).toBe("unchanged");
  });

  it("leaves an existing target exactly as it was when everything conflicts", async () => {
    await r.git("branch", "integration");
    const ids = await tasks(1, () => ({ "shared.txt": "task\n" }));
    // The target moved on with its own change to the same file.
    const side = await wt.open({ directory: r.repo });
    await r.git("-C", side.path, "checkout", "-q", "integration");
    await writeFile(join(side.path, "shared.txt"), "the target's own\n");
    await r.git("-C", side.path, "commit", "-q", "-am", "target's own");
    await r.git("-C", side.path, "checkout", "-q", "--detach");
    const before = (await r.git("rev-parse", "integration")).trim();
    const report = await wt.merge(ids, "integration");
    expect(report.outcomes[0]).toMatchObject({ result: "conflict", files: ["shared.txt"], with: [] });
    expect(report.landed).toBe("unchanged");
    expect((await r.git("rev-parse", "integration")).trim()).toBe(before);
  });

  it("fast-forwards the user's checked-out branch when the merge lands there", async () => {
    const ids = await tasks(2, (i) => ({ [`f${i}.txt`]: `${i}\n` }));
    const report = await wt.merge(ids); // default: the branch checked out where the tasks started
    expect(report).toMatchObject({ into: "main", landed: "checkout", checkout: r.repo });
    expect(await r.git("status", "--porcelain")).toBe("");
    expect(await readFile(join(r.repo, "f1.txt"), "utf8")).toBe("1\n");
    expect((await r.git("rev-parse", "HEAD")).trim()).toBe(report.after);
  });

  it("refuses, changing nothing, when the user's uncommitted changes would be overwritten", async () => {
    const ids = await tasks(1, () => ({ "shared.txt": "task\n" }));
    await writeFile(join(r.repo, "shared.txt"), "my uncommitted edit\n");
    const before = await userSide(r);
    const error = await wt.merge(ids).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MergeLandingError);
    expect((error as Error).message).toMatch(/uncommitted changes to "shared.txt" would be overwritten/);
    expect(await userSide(r)).toEqual(before);
    // A change elsewhere in the checkout does not stand in the way (git keeps it).
    await r.git("checkout", "--", "shared.txt");
    await writeFile(join(r.repo, "README.md"), "edited\n");
    expect((await wt.merge(ids)).landed).toBe("checkout");
    expect(await readFile(join(r.repo, "README.md"), "utf8")).toBe("edited\n");
    expect(await readFile(join(r.repo, "shared.txt"), "utf8")).toBe("task\n");
  });

  it("refuses bad targets and tasks it does not know", async () => {
    const ids = await tasks(1, () => ({ "x.txt": "x\n" }));
    await expect(wt.merge(ids, "bad..name")).rejects.toThrow(/not a valid branch name/);
    await expect(wt.merge(["ses_unknown"])).rejects.toThrow(/not a worktree task/);
    await expect(wt.merge([])).rejects.toThrow(/at least one/);
    await r.git("checkout", "-q", "--detach");
    await expect(wt.merge(ids)).rejects.toThrow(/detached HEAD: name the branch/);
  });

  it("lists a task that changed nothing as unchanged", async () => {
    const ids = await tasks(2, (i): Record<string, string> => (i === 0 ? {} : { "y.txt": "y\n" }));
    const report = await wt.merge(ids, "integration");
    expect(report.unchanged).toEqual([ids[0]]);
    expect(report.outcomes.map((o) => o.id)).toEqual([ids[1]]);
  });
});
