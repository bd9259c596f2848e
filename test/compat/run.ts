// npm run test:compat [-- VERSION ...]: the compatibility matrix. For each version (default: the
// full MATRIX of targets.ts), runs the `compat` vitest project against it, reads its spec, and
// rewrites spec/compatibility.json and docs/compatibility.md. Exit 1 when a version failed a
// feature (the docs are still written: a failure is a finding).
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { specInfo as v2SpecInfo } from "../../generated/v2/operations.js";
import type { CompatibilityData } from "../../src/core/engine/server/compatibility.js";
import { V2_PIN_PREFIX } from "../../src/core/engine/server/spec.js";
import { opencodeRelease } from "../support/opencode-release.js";
import { featureResults, loadPinnedSpec, merge, renderMarkdown, specSummary, type VitestJson } from "./report.js";
import { renderDocs } from "./render.js";
import { MATRIX, PINNED, targetFor } from "./targets.js";

const ROOT = join(import.meta.dirname, "..", "..");
const DATA = join(ROOT, "spec", "compatibility.json");
const DOC = join(ROOT, "docs", "compatibility.md");

/** The commit under test, marked `-dirty` when the tree differs from it (a dirty column is not reproducible). */
function measuredCommit(): string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();
  const head = git("rev-parse", "--short=12", "HEAD");
  // The data and the page this run writes are not what it measured.
  const dirty = git("status", "--porcelain", "--", ".", ":!spec/compatibility.json", ":!docs/compatibility.md") !== "";
  return dirty ? `${head}-dirty` : head;
}

function runVitest(name: string, out: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        join(ROOT, "node_modules", "vitest", "vitest.mjs"),
        "run",
        "--project",
        "compat",
        "test/compat/matrix.test.ts",
        "--reporter=default",
        "--reporter=json",
        `--outputFile.json=${join(out, `${name}.vitest.json`)}`,
      ],
      {
        cwd: ROOT,
        env: { ...process.env, OCC_COMPAT_VERSIONS: name, OCC_COMPAT_OUT: out },
        stdio: "inherit",
      },
    );
    child.once("exit", (code) => resolve(code ?? 1));
  });
}

async function main(): Promise<number> {
  if (process.argv.includes("--render")) {
    renderDocs();
    console.log(`wrote ${DOC}`);
    return 0;
  }
  const names = process.argv.slice(2).filter((a) => a !== "--");
  for (const n of names) targetFor(n); // a bad name fails here, before anything runs
  const versions = names.length ? names : MATRIX;
  console.log(`compat: ${versions.join(", ")}`);
  execFileSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" }); // the MCP server under test
  const pinned = loadPinnedSpec(join(ROOT, "spec", "openapi.json"));
  const pinnedV2 = loadPinnedSpec(join(ROOT, "spec", "v2", "openapi.json"));
  let data = JSON.parse(readFileSync(DATA, "utf8")) as CompatibilityData;
  data.pinned = PINNED;
  const out = mkdtempSync(join(tmpdir(), "occ-compat-"));
  let failures = 0;
  const times: string[] = [];
  try {
    for (const name of versions) {
      const target = targetFor(name);
      if (target.expectVersion && target.expectVersion !== PINNED) {
        // Installing is not part of the version's run time.
        await opencodeRelease(target.expectVersion);
      }
      const started = Date.now();
      const code = await runVitest(name, out);
      const seconds = Math.round((Date.now() - started) / 1000);
      times.push(`${name}: ${seconds} s`);
      const reportFile = join(out, `${name}.vitest.json`);
      if (!existsSync(reportFile)) throw new Error(`vitest wrote no report for ${name} (exit ${code})`);
      const notesFile = join(out, `${name}.notes.json`);
      const refusals = existsSync(notesFile) ? (JSON.parse(readFileSync(notesFile, "utf8")) as Record<string, string>) : {};
      const { features, results } = featureResults(JSON.parse(readFileSync(reportFile, "utf8")) as VitestJson, name, refusals);
      const specFile = join(out, `${name}.openapi.json`);
      const versionFile = join(out, `${name}.version`);
      const reported = existsSync(versionFile) ? readFileSync(versionFile, "utf8") : "unknown";
      // A 2.x server is measured against the 2.x pin, as oc_status measures it (src/core/engine/server/spec.ts).
      const major2 = reported.startsWith("2.");
      const record = {
        reported,
        ranAt: new Date().toISOString(),
        commit: measuredCommit(),
        seconds,
        node: process.version,
        results,
        spec: !existsSync(specFile)
          ? null
          : major2
            ? specSummary(pinnedV2, readFileSync(specFile), { version: v2SpecInfo.opencodeVersion, ignorePrefix: V2_PIN_PREFIX })
            : specSummary(pinned, readFileSync(specFile)),
      };
      if (Object.values(results).some((r) => !r.ok)) failures += 1;
      data = merge(data, name, record, features);
      writeFileSync(DATA, `${JSON.stringify(data, null, 2)}\n`);
      writeFileSync(DOC, renderMarkdown(data));
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  console.log(`\ncompat run times: ${times.join(", ")}\nwrote ${DOC} and ${DATA}`);
  return failures === 0 ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  },
);
