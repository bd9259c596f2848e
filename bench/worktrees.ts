// What `isolation: "worktree"` costs per task next to today's shared directory, on a repository of
// FILES files (no setup). Starts the test harness (real opencode 1.x + scripted model), prints
// figures, removes all.
//   1. the git side alone (the Worktrees layer, no opencode): making a task's worktree (next to a
//      `git worktree add` by hand), committing a one-file change as its branch, removing it; median
//      of RUNS one at a time, and WIDTH at once.
//   2. whole tasks: WIDTH one-write turns through parallel(), in the shared directory and with
//      isolation "worktree" (each on its own private opencode server, which is most of the cost).
// Run: npm run bench:worktrees [-- --files N --runs R --width W] (defaults 5,000, 12, 12)
import { writeFile, mkdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { resolveOpencodeBinary } from "../src/client/spawn.js";
import { Conductor } from "../src/core/conductor.js";
import { InstanceManager } from "../src/core/instances/manager.js";
import { Worktrees } from "../src/core/worktrees/worktrees.js";
import { gitAt } from "../test/support/git-repo.js";
import { makeProjectDir, offlineConfig, offlineEnv, startOpencode } from "../test/support/opencode.js";
import { registerPid, unregisterPid } from "../test/support/registry.js";
import { text, toolCall } from "../test/support/scripted-model.js";

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "5000" },
    runs: { type: "string", default: "12" },
    width: { type: "string", default: "12" },
  },
});
// Whole folders of 50 files.
const FILES = Math.max(50, Math.round((Number(values.files) || 5_000) / 50) * 50);
const RUNS = Math.max(1, Number(values.runs) || 12);
const WIDTH = Math.max(1, Number(values.width) || 12);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const ms = (x: number) => `${Math.round(x)} ms`;
const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
  const t = performance.now();
  const r = await f();
  return [r, performance.now() - t];
};

const oc = await startOpencode();
const stateDir = join(oc.root, "state");
const manager = new InstanceManager({
  stateDir,
  ttlS: 600,
  env: offlineEnv(oc.home),
  configFor: () => offlineConfig(oc.model.baseURL),
  onSpawn: (i) => registerPid(i.pid, basename(resolveOpencodeBinary()), oc.root),
  onExit: (i) => unregisterPid(i.pid),
});
const conductor = new Conductor({ url: oc.url, password: oc.password, directory: oc.directory, instances: manager, stateDir });
try {
  const repo = await makeProjectDir(oc, "repo", { gitInit: true });
  const git = gitAt(repo, oc.home);
  // 100 folders of 50 files of about 1 KB.
  for (let d = 0; d < FILES / 50; d++) {
    await mkdir(join(repo, `src/m${d}`), { recursive: true });
    await Promise.all(Array.from({ length: 50 }, (_, f) => writeFile(join(repo, `src/m${d}/f${f}.ts`), `export const v${f} = ${d};\n`.repeat(40))));
  }
  await git("add", "-A");
  await git("commit", "-q", "-m", "files");
  console.log(`repository: ${(await git("ls-files")).split("\n").filter(Boolean).length} files`);

  // 1. The git side alone.
  const layer = new Worktrees({ stateDir: join(oc.root, "state-git") });
  await layer.cleanStale();
  const one = async (i: number) => {
    const [open, create] = await timed(() => layer.open({ directory: repo }));
    await layer.started(open.id, `ses_bench${i}`);
    await writeFile(join(open.path, "src/m0/f0.ts"), `changed ${i}\n`);
    const [, commit] = await timed(() => layer.finish(open.id, { title: `bench ${i}`, task: "bench" }));
    const [, remove] = await timed(() => layer.remove(`ses_bench${i}`));
    return { create, commit, remove };
  };
  // The same checkout by hand, next to each task's: what git itself takes on this machine right now.
  const plain = async (i: number) => {
    const [, add] = await timed(() => git("worktree", "add", "--detach", "--quiet", join(oc.root, `plain-${i}`), "HEAD"));
    await git("worktree", "remove", "--force", join(oc.root, `plain-${i}`));
    return add;
  };
  const serial = [];
  const bare = [];
  for (let i = 0; i < RUNS; i++) {
    serial.push(await one(i));
    bare.push(await plain(i));
  }
  const [, together] = await timed(() => Promise.all(Array.from({ length: WIDTH }, (_, i) => one(100 + i))));
  layer.close();
  console.log(`git side (median of ${RUNS}, one at a time):`);
  console.log(`  create the worktree: ${ms(median(serial.map((s) => s.create)))} (git worktree add by hand: ${ms(median(bare))})`);
  console.log(`  commit + branch:     ${ms(median(serial.map((s) => s.commit)))}`);
  console.log(`  remove:              ${ms(median(serial.map((s) => s.remove)))}`);
  console.log(`  ${WIDTH} at once, all three: ${ms(together)}`);

  // 2. Whole tasks: one write turn each, in the shared directory and in worktrees.
  const tasks = Array.from({ length: WIDTH }, (_, i) => ({ task: `Task ${i}`, title: `Task ${i}`, directory: repo }));
  const shared = async () => {
    const r = await conductor.parallel(tasks, {
      onSession: (id, i) => void oc.model.forSession(id).queue(toolCall("write", { filePath: join(repo, `out-${i}.txt`), content: `${i}\n` }), text("done")),
    });
    if (r.counts.done !== WIDTH) throw new Error(`shared: ${JSON.stringify(r.counts)}`);
  };
  const isolated = async () => {
    const r = await conductor.parallel(tasks, {
      isolation: "worktree",
      onSession: async (id, i) => {
        const row = await conductor.worktrees!.registry.bySession(id);
        oc.model.forSession(id).queue(toolCall("write", { filePath: join(row!.path, `out-${i}.txt`), content: `${i}\n` }), text("done"));
      },
    });
    if (r.counts.done !== WIDTH) throw new Error(`worktree: ${JSON.stringify(r.counts)}`);
  };
  const [, sharedMs] = await timed(shared);
  await git("checkout", "-q", "--", ".");
  await git("clean", "-qfd");
  const [, worktreeMs] = await timed(isolated);
  console.log(`${WIDTH} one-write tasks through parallel(), wall time:`);
  console.log(`  shared directory:     ${ms(sharedMs)} (${ms(sharedMs / WIDTH)} per task)`);
  console.log(`  isolation "worktree": ${ms(worktreeMs)} (${ms(worktreeMs / WIDTH)} per task)`);
} finally {
  conductor.close();
  await manager.stopAll();
  await oc.stop();
}
