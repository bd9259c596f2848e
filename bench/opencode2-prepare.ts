// How long the 2.x test server takes to prepare: cold (empty tool cache: bun from npm, unpack,
// bun install, single-binary build), warm (cached binary), and the server's start to its
// "listening" line. The cold run uses a fresh temp tool cache, so the shared one is not touched.
// Run: npx tsx bench/opencode2-prepare.ts
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

// A child per measurement: the tool cache location is read once, when the harness module loads.
const CHILD = `
  const { prepareOpencode2, startOpencode2 } = await import("./test/support/opencode2.ts");
  const prepared = await prepareOpencode2();
  const t = Date.now();
  const server = await startOpencode2();
  const startMs = Date.now() - t;
  await server.stop();
  console.log(JSON.stringify({ source: prepared.source, prepareMs: prepared.ms, startMs }));
`;

async function measure(cache: string): Promise<{ source: string; prepareMs: number; startMs: number }> {
  const { stdout } = await run("node_modules/.bin/tsx", ["--input-type=module", "-e", CHILD], {
    env: { ...process.env, OCC_TOOL_CACHE: cache, OPENCODE2_BIN: "" },
    timeout: 900_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split("\n").pop()!);
}

const cache = mkdtempSync(join(tmpdir(), "occ-bench-cache-"));
try {
  const cold = await measure(cache);
  const warm = await measure(cache);
  console.log(`cold: ${cold.source}, prepared in ${(cold.prepareMs / 1000).toFixed(1)} s; server ready in ${cold.startMs} ms`);
  console.log(`warm: ${warm.source}, prepared in ${warm.prepareMs} ms; server ready in ${warm.startMs} ms`);
} finally {
  rmSync(cache, { recursive: true, force: true });
}
