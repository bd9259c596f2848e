// The worktree suite both majors run (test/e2e/core/worktrees.test.ts on 1.x, test/e2e-v2/worktrees.test.ts
// on 2.x): isolation "worktree" in the library against a real opencode and the scripted model.
// Twelve tasks at once in one repository, each writing the same file in its own worktree (on its
// own private server), come back as twelve branches each holding only its change, while the user's
// checkout stays byte for byte as it was; each result is what opencode recorded for its session.
// Then the merges (the first lands, the others conflict on the file; four tasks on four files
// merge in one call: the width is the first test's to prove), a failing setup, and two dev servers on their own CONDUCTOR_PORT at once.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import type { InstanceManager } from "../../src/core/instances/manager.js";
import type { ParallelResult } from "../../src/core/parallel.js";
import type { PlacedResult } from "../../src/core/placement/result.js";
import { SetupError } from "../../src/core/worktrees/setup.js";
import type { WorktreeReport } from "../../src/core/worktrees/task.js";
import { commitFiles, gitAt, userSide, type Git } from "./git-repo.js";
import { makeProjectDir, type TestOpencode } from "./opencode.js";
import { testInstances } from "./test-instances.js";
import { text, type toolCall } from "./scripted-model.js";

export interface WorktreeSuite {
  /** The harness server (1.x or 2.x) whose home and model the instances share. */
  start(): Promise<TestOpencode>;
  /** The binary private instances run (the harness's major). */
  binary(): Promise<string>;
  /** The agent's tool calls in this major's words. */
  write(path: string, content: string): ReturnType<typeof toolCall>;
  shell(command: string): ReturnType<typeof toolCall>;
}

export function worktreeSuite(major: WorktreeSuite): void {
  // Twelve private servers start at once on a shared 2-core machine: generous ceilings.
  const SLOW = 600_000;
  let oc: TestOpencode;
  let manager: InstanceManager;
  let conductor: Conductor;
  let reader: Conductor;
  let repo: string;
  let git: Git;

  beforeAll(async () => {
    oc = await major.start();
    const binary = await major.binary();
    repo = await makeProjectDir(oc, "repo", { gitInit: true });
    git = gitAt(repo, oc.home);
    await commitFiles(repo, git, { "shared.txt": "base\n" });
    manager = testInstances(oc, binary);
    conductor = new Conductor({ url: oc.url, password: oc.password, directory: oc.directory, instances: manager, stateDir: join(oc.root, "state") });
    // Re-reads go to the harness's own server: the instances share its data dir, as a user's would.
    reader = new Conductor({ url: oc.url, password: oc.password, directory: oc.directory });
  }, 120_000);
  afterAll(async () => {
    conductor?.close();
    reader?.close();
    await manager?.stopAll();
    await oc?.stop();
  });

  type Steps = (path: string) => ReturnType<typeof toolCall>[];
  type Done = PlacedResult & { worktree: WorktreeReport };

  /** Queues, for a worktree task's session, its agent's steps (given its worktree's path) and its answer. */
  async function script(sessionId: string, steps: Steps, answer: string): Promise<void> {
    const row = await conductor.worktrees!.registry.bySession(sessionId);
    oc.model.forSession(sessionId).queue(...steps(row!.path), text(answer));
  }

  /** One worktree task through the library's delegate. */
  function task(name: string, steps: Steps, answer: string, extra: Record<string, unknown> = {}): Promise<Done> {
    return conductor.delegate({
      task: name,
      title: name,
      directory: repo,
      isolation: "worktree",
      ...extra,
      onSession: (id) => script(id, steps, answer),
    }) as Promise<Done>;
  }

  /** A batch of worktree tasks through the library's parallel (`isolation` for the whole batch). */
  async function batch(n: number, steps: (i: number) => Steps, extra: Record<string, unknown> = {}): Promise<Done[]> {
    const tasks = Array.from({ length: n }, (_, i) => ({ task: `Task ${i}`, title: `Task ${i}`, directory: repo }));
    const r = await conductor.parallel(tasks, { isolation: "worktree", ...extra, onSession: (id, i) => script(id, steps(i), `Did task ${i}.`) });
    return r.results.map((row: ParallelResult) => row as unknown as Done);
  }

  const write = (content: string) => (path: string) => [major.write(join(path, "shared.txt"), content)];

  /** The result against a re-read of the session from opencode. */
  async function expectRecorded(r: Done): Promise<void> {
    const recorded = (await reader.result(r.sessionId)).last;
    expect(r.status).toBe(recorded.status);
    expect(r.answer).toBe(recorded.answer);
    // A re-read names the files the turn's tool calls wrote; the task's own answer adds the turn's diff counts.
    expect(r.files?.map((f) => f.path)).toEqual(recorded.files?.map((f) => f.path));
  }

  describe("twelve worktree tasks on the same file", () => {
    const results: Done[] = [];

    it(
      "end as twelve branches, each with only its own change; the user's checkout and branch are unchanged",
      async () => {
        const before = await userSide({ repo, git });
        results.push(...(await batch(12, (i) => write(`task ${i}\n`))));
        expect(await userSide({ repo, git })).toEqual(before);
        for (const [i, r] of results.entries()) {
          expect(r.status, JSON.stringify(r.error)).toBe("done");
          expect(r.isolation).toBe("worktree");
          const w = r.worktree;
          if (w.state !== "finished") throw new Error(`task ${i} not finished: ${w.state}`);
          expect(w.branch).toBe(`conductor/${r.sessionId}`);
          expect(w.base).toBe(before.head);
          expect(w.files).toEqual([{ path: "shared.txt", status: "modified", additions: 1, deletions: 1 }]);
          expect(w.patch).toContain(`-base\n+task ${i}\n`);
          expect(await git("show", `${w.branch}:shared.txt`)).toBe(`task ${i}\n`);
          expect((await git("diff", "--name-only", w.base, w.branch!)).trim()).toBe("shared.txt");
          await expectRecorded(r);
        }
        expect(new Set(results.map((r) => (r.worktree as { port: number }).port)).size).toBe(12);
        expect((await git("branch", "--list", "conductor/*")).split("\n").filter(Boolean)).toHaveLength(12);
      },
      SLOW,
    );

    it("merge: the first lands, the other eleven conflict on the file; the target's tree is the first task's", async () => {
      const ids = results.map((r) => r.sessionId);
      const report = await conductor.worktrees!.merge(ids, "integration");
      expect(report.outcomes[0]).toMatchObject({ id: ids[0], result: "fast-forward" });
      for (const o of report.outcomes.slice(1)) expect(o).toMatchObject({ result: "conflict", files: ["shared.txt"], with: [ids[0]] });
      expect(await git("rev-parse", "integration^{tree}")).toBe(await git("rev-parse", `conductor/${ids[0]}^{tree}`));
      expect(await git("symbolic-ref", "--short", "HEAD")).toBe("main\n");
    });
  });

  describe("four worktree tasks on four files", () => {
    it(
      "merge cleanly in one call",
      async () => {
        const results = await batch(4, (i) => (path) => [major.write(join(path, `file-${i}.txt`), `file ${i}\n`)]);
        for (const r of results) expect(r.status, JSON.stringify(r.error)).toBe("done");
        const report = await conductor.worktrees!.merge(
          results.map((r) => r.sessionId),
          "combined",
        );
        expect(report.outcomes.map((o) => o.result)).toEqual(["fast-forward", ...Array(3).fill("merged")]);
        for (let i = 0; i < 4; i++) expect(await git("show", `combined:file-${i}.txt`)).toBe(`file ${i}\n`);
      },
      SLOW,
    );
  });

  describe("a task that changes nothing", () => {
    it(
      "says so and leaves no branch",
      async () => {
        const before = await userSide({ repo, git });
        const r = await task("Only look", () => [], "Nothing needed changing.");
        expect(r.status, JSON.stringify(r.error)).toBe("done");
        await expectRecorded(r);
        if (r.worktree.state !== "finished") throw new Error(`not finished: ${r.worktree.state}`);
        expect(r.worktree).toMatchObject({ changed: false, base: before.head, head: before.head, files: [], patch: "" });
        expect(r.worktree.branch).toBeUndefined();
        expect(await git("branch", "--list", `conductor/${r.sessionId}`)).toBe("");
        expect(await userSide({ repo, git })).toEqual(before);
      },
      SLOW,
    );
  });

  describe("setup and CONDUCTOR_PORT", () => {
    it("a failing setup ends the task as an error with its output, before any session (alone, and as a batch's row)", async () => {
      const before = await userSide({ repo, git });
      const rows = (await conductor.worktrees!.registry.read()).length;
      const error = await task("never runs", write("x\n"), "never", { setup: "echo preparing; echo 'missing dependency' >&2; exit 7" }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SetupError);
      expect((error as SetupError).run).toMatchObject({ exit: 7 });
      expect((error as Error).message).toContain("missing dependency");
      expect(await userSide({ repo, git })).toEqual(before);
      // No worktree was kept for it, and no server was started.
      expect(await conductor.worktrees!.registry.read()).toHaveLength(rows);
      expect(oc.model.requests.filter((r) => r.body.messages?.some((m) => JSON.stringify(m.content).includes("never runs")))).toEqual([]);
      const [row] = await batch(1, () => write("x\n"), { setup: "exit 9" });
      expect(row).toMatchObject({ status: "error", error: { name: "SetupFailed" } });
      expect((row as unknown as { sessionId?: string }).sessionId).toBeUndefined();
    });

    it(
      "two tasks each start a server on their own $CONDUCTOR_PORT, at the same time, and both succeed",
      async () => {
        // Each server stays up for 3 s, so the two overlap: a shared port would fail one of them.
        const serve =
          "node -e \"const p=Number(process.env.CONDUCTOR_PORT); const s=require('http').createServer((q,r)=>r.end('ok')).listen(p,'127.0.0.1',()=>{console.log('listening on '+p); setTimeout(()=>s.close(),3000)})\"";
        const [a, b] = await batch(2, () => () => [major.shell(serve)], {
          setup: 'echo "setup sees port $CONDUCTOR_PORT" > .setup-port',
        });
        for (const r of [a!, b!]) {
          expect(r.status, JSON.stringify(r.error)).toBe("done");
          const w = r.worktree as { port: number; path: string; setup?: { exit: number } };
          expect(w.setup).toMatchObject({ exit: 0 });
          expect(await readFile(join(w.path, ".setup-port"), "utf8")).toBe(`setup sees port ${w.port}\n`);
          // What the agent's command printed, as opencode recorded it.
          const outputs = JSON.stringify(await reader.engine.messages(r.sessionId));
          expect(outputs).toContain(`listening on ${w.port}`);
          expect(outputs).not.toContain("EADDRINUSE");
        }
        expect((a!.worktree as { port: number }).port).not.toBe((b!.worktree as { port: number }).port);
      },
      SLOW,
    );
  });
}
