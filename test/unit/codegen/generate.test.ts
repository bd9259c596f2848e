// npm run codegen: works on an older spec, is deterministic, and generated/ is up to date.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateFiles, GENERATED_FILES, writeGenerated } from "../../../codegen/lib/generate.js";

const tmp = mkdtempSync(join(tmpdir(), "codegen-test-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("codegen from the opencode 1.15.0 spec", () => {
  it("generates all files with 131 operations", async () => {
    const out = join(tmp, "old");
    await writeGenerated("test/fixtures/specs/opencode-1.15.0.json", out);
    expect(readdirSync(out).sort()).toEqual([...GENERATED_FILES].sort());
    const mod = (await import(pathToFileURL(join(out, "operations.ts")).href)) as {
      operations: Record<string, { id: string }>;
      specInfo: { operationCount: number; opencodeVersion: string };
    };
    expect(Object.keys(mod.operations)).toHaveLength(131);
    expect(mod.specInfo.operationCount).toBe(131);
    // No meta.json next to the fixture: the version falls back to info.version.
    expect(mod.specInfo.opencodeVersion).toBe("1.0.0");
    expect(mod.operations["v2.session.prompt"]).toBeDefined();
    expect(mod.operations["v2.agent.list"]).toBeUndefined();
  });
});

describe("codegen from spec/openapi.json", () => {
  let first: Map<string, string>;
  let second: Map<string, string>;
  beforeAll(async () => {
    first = await generateFiles("spec/openapi.json");
    second = await generateFiles("spec/openapi.json");
  });

  it("produces identical bytes on every run, without timestamps", () => {
    expect([...first.keys()]).toEqual(["README.md", "openapi.d.ts", "operations.ts"]);
    for (const [name, text] of first) expect(second.get(name) === text, name).toBe(true);
    expect(first.get("operations.ts")).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
  });

  it("matches the checked-in generated/ (else run `npm run codegen`)", () => {
    for (const [name, text] of first) expect(readFileSync(join("generated", name), "utf8") === text, name).toBe(true);
  });
});
