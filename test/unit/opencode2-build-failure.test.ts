// A 2.x binary that cannot be prepared fails only what needs it: a real vitest run of one unit file
// and one e2e-v2 file with OPENCODE2_BIN naming no file (the preparation fails at once, as a broken
// build would after minutes). The unit file passes and is reported; the e2e-v2 file fails with
// the preparation's own error and what to do, and the run exits 1.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const out = mkdtempSync(join(tmpdir(), "occ-v2-failure-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

interface Report {
  testResults: Array<{ name: string; status: string; assertionResults: Array<{ status: string; failureMessages: string[] }>; message?: string }>;
}

it("fails the 2.x project's files with the build's error, and still runs and reports the others", async () => {
  const report = join(out, "report.json");
  const child = spawn(
    process.execPath,
    [
      join(ROOT, "node_modules", "vitest", "vitest.mjs"),
      "run",
      "--project",
      "unit",
      "--project",
      "e2e-v2",
      "test/unit/spec-v2-pin.test.ts",
      "test/e2e-v2/prompts.test.ts",
      "--reporter=json",
      `--outputFile.json=${report}`,
    ],
    { cwd: ROOT, env: { ...process.env, OPENCODE2_BIN: join(out, "no-such-opencode") }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdout.resume();
  const [code] = (await once(child, "exit")) as [number | null];
  expect(code, stderr.slice(-2_000)).toBe(1);
  expect(stderr).toContain("[e2e-v2] opencode 2.x is not available, so every test that needs it fails (the other projects still run)");
  const files = (JSON.parse(readFileSync(report, "utf8")) as Report).testResults;
  const unit = files.find((f) => f.name.endsWith("test/unit/spec-v2-pin.test.ts"))!;
  const v2 = files.find((f) => f.name.endsWith("test/e2e-v2/prompts.test.ts"))!;
  expect(unit.status).toBe("passed");
  expect(unit.assertionResults.length).toBeGreaterThan(0);
  expect(v2.status).toBe("failed");
  const failures = JSON.stringify(v2);
  expect(failures).toContain("opencode 2.x could not be prepared for this test run, so the tests that need it fail (the other projects ran)");
  expect(failures).toContain("no-such-opencode: no such file");
});
