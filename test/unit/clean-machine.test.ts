// The clean-machine check (test/support/clean-machine.ts, run by the global setup of every test
// run): the pure parts, then two real vitest runs with that global setup, a HOME and a temp dir
// of their own: one whose test writes into the HOME it was given, into its TMPDIR, and by path
// into the real HOME and temp dir, which fails naming each; one that writes nothing, which passes
// and leaves both listings as they were.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { gained, leftovers, listTree, type Baseline, type RunDirs } from "../support/clean-machine.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "occ-clean-machine-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("listing and comparing", () => {
  it("names only the new entries, a new folder once (not what it holds)", () => {
    expect(gained(["a", "b"], ["a", "b", "c", "d", "d/e", "d/e/f"])).toEqual(["c", "d"]);
    expect(gained(["a", "a/b"], ["a", "a/b", "a/b/new"])).toEqual(["a/b/new"]);
  });

  it("lists a tree to a depth, sorted, skipping what it is told", () => {
    const dir = join(scratch, "tree");
    mkdirSync(join(dir, "b", "deep", "deeper"), { recursive: true });
    mkdirSync(join(dir, "skipped"));
    writeFileSync(join(dir, "a"), "");
    expect(listTree(dir, { maxDepth: 2, skip: [join(dir, "skipped")] })).toEqual(["a", "b", "b/deep"]);
  });

  it("reports the run's own HOME and TMPDIR when not empty, and what the real ones gained; another live run's folder is not ours", () => {
    const base = join(scratch, "leftovers");
    const dirs: RunDirs = { root: join(base, "tmp", "occ-run-1-x"), home: join(base, "run-home"), tmp: join(base, "run-tmp"), scratch: "", registry: "" };
    for (const d of [dirs.root, dirs.home, dirs.tmp, join(base, "home")]) mkdirSync(d, { recursive: true });
    const b: Baseline = { home: join(base, "home"), tmp: join(base, "tmp"), skip: [], vitest: [], homeEntries: [], tmpEntries: [] };
    writeFileSync(join(dirs.home, ".bash_history"), "");
    writeFileSync(join(dirs.tmp, "left.so"), "");
    mkdirSync(join(dirs.tmp, "tsx-0")); // tsx's compile cache: allowed, and documented
    writeFileSync(join(b.home, "new"), "");
    mkdirSync(join(b.tmp, "occ-run-4242-abc")); // a run that is still going
    mkdirSync(join(b.tmp, "occ-run-4343-abc")); // a run that is gone
    expect(leftovers(b, dirs, (pid) => pid === 4242)).toEqual([
      `the run's HOME: ${join(dirs.home, ".bash_history")}`,
      `the run's TMPDIR: ${join(dirs.tmp, "left.so")}`,
      `the real HOME: ${join(b.home, "new")}`,
      `the system temp dir: ${join(b.tmp, "occ-run-4343-abc")} (folder, written ${statSync(join(b.tmp, "occ-run-4343-abc")).mtime.toISOString()})`,
    ]);
  });
});

/** A vitest run of one test body, with the run's global setup, in a HOME and temp dir of its own. */
async function vitestRun(name: string, body: string) {
  const dir = mkdtempSync(join(scratch, `${name}-`));
  const home = join(dir, "home");
  const tmp = join(dir, "tmp");
  const project = join(dir, "project");
  for (const d of [home, tmp, project]) mkdirSync(d);
  writeFileSync(join(home, ".existing"), "");
  writeFileSync(
    join(project, "vitest.config.mjs"),
    `export default { test: { globals: true, include: ["*.test.mjs"], globalSetup: [${JSON.stringify(join(ROOT, "test/support/global-setup.ts"))}] } };\n`,
  );
  writeFileSync(
    join(project, "case.test.mjs"),
    `import { mkdirSync, rmSync, writeFileSync } from "node:fs";\nimport { homedir, tmpdir } from "node:os";\nimport { join } from "node:path";\ntest("case", () => {\n${body}\n});\n`,
  );
  const before = { home: listTree(home, { maxDepth: 6 }), tmp: listTree(tmp, { maxDepth: 1 }) };
  const child = spawn(
    process.execPath,
    [join(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--config", join(project, "vitest.config.mjs"), "--root", project],
    {
      cwd: project,
      env: { ...process.env, HOME: home, TMPDIR: tmp, REAL_HOME: home, REAL_TMP: tmp },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, output, home, tmp, before, after: { home: listTree(home, { maxDepth: 6 }), tmp: listTree(tmp, { maxDepth: 1 }) } };
}

describe("a real test run", () => {
  it("fails when a test wrote into HOME or TMPDIR, or by path into the real ones, naming each", async () => {
    const r = await vitestRun(
      "leaky",
      [
        `mkdirSync(join(homedir(), ".config", "leaky"), { recursive: true });`,
        `writeFileSync(join(homedir(), ".config", "leaky", "state"), "x");`,
        `writeFileSync(join(tmpdir(), "leaky-temp"), "x");`,
        `writeFileSync(join(process.env.REAL_HOME, "written-by-path"), "x");`,
        `writeFileSync(join(process.env.REAL_TMP, "stray"), "x");`,
      ].join("\n"),
    );
    expect(r.code, r.output).toBe(1);
    expect(r.output).toContain("tests wrote outside their temp dirs");
    expect(r.output).toMatch(/the run's HOME: \S+\/occ-run-\d+-\w+\/home\/\.config\n/);
    expect(r.output).toMatch(/the run's TMPDIR: \S+\/occ-run-\d+-\w+\/tmp\/leaky-temp\n/);
    expect(r.output).toContain(`the real HOME: ${join(r.home, "written-by-path")}`);
    expect(r.output).toContain(`the system temp dir: ${join(r.tmp, "stray")}`);
    // The run folder itself is gone (only the two strays written by path are left).
    expect(r.after.tmp).toEqual(["stray"]);
  });

  it("passes when a test wrote only into temp dirs it removed, and leaves both listings as they were", async () => {
    const r = await vitestRun(
      "clean",
      [`const dir = join(tmpdir(), "own");`, `mkdirSync(dir);`, `writeFileSync(join(dir, "f"), "x");`, `rmSync(dir, { recursive: true });`].join("\n"),
    );
    expect(r.code, r.output).toBe(0);
    expect(r.after).toEqual(r.before);
  });
});
