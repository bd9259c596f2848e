// npm run codegen:check fails on a tampered folder and names what differs. A one-operation spec
// keeps the regeneration inside the child process quick.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { describeDrift } from "../../../codegen/lib/check.js";
import { compareDirs } from "../../../codegen/lib/compare-dirs.js";

const tmp = mkdtempSync(join(tmpdir(), "codegen-check-test-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const tinySpec = {
  openapi: "3.1.0",
  info: { title: "tiny", version: "1.0.0" },
  paths: {
    "/ping": {
      get: {
        operationId: "ping",
        responses: { "200": { description: "ok", content: { "application/json": { schema: { type: "boolean" } } } } },
      },
    },
  },
};

describe("codegen:check", () => {
  it("exits 1 naming each differing, missing and extra file, and says how to fix it", async () => {
    const spec = join(tmp, "tiny.json");
    writeFileSync(spec, JSON.stringify(tinySpec));
    const dir = join(tmp, "generated");
    mkdirSync(dir);
    writeFileSync(join(dir, "operations.ts"), "// hand edit\n");
    writeFileSync(join(dir, "stale.ts"), "");

    let result: { code: number; stderr: string };
    try {
      await promisify(execFile)("node_modules/.bin/tsx", ["codegen/check.ts", "--spec", spec, "--generated", dir]);
      result = { code: 0, stderr: "" };
    } catch (error) {
      result = error as { code: number; stderr: string };
    }
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`differs: ${join(dir, "operations.ts")}`);
    expect(result.stderr).toContain(`missing: ${join(dir, "README.md")}`);
    expect(result.stderr).toContain(`missing: ${join(dir, "openapi.d.ts")}`);
    expect(result.stderr).toContain(`extra:   ${join(dir, "stale.ts")}`);
    expect(result.stderr).toContain("Run `npm run codegen`");
  });

  it("compares folders byte by byte", () => {
    const a = join(tmp, "a");
    const b = join(tmp, "b");
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(a, "same"), "x");
    writeFileSync(join(b, "same"), "x");
    writeFileSync(join(a, "eol"), "x\n");
    writeFileSync(join(b, "eol"), "x\r\n");
    expect(compareDirs(a, b)).toEqual({ differing: ["eol"], missing: [], extra: [] });
    expect(describeDrift({ differing: [], missing: [], extra: [] }, "generated", "spec/openapi.json")).toBe("");
  });
});
