// Rules every tool's listed schema follows, and the bookkeeping around the per-tool tests: each
// tool's own test file (test/unit/tools/<tool>.test.ts) checks its snapshot in test/__toolsnaps__/
// and its handler; here: no stale snapshot, no tool without its test file, and the shared rules.
import { existsSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { allListedTools, TOOLSNAPS_DIR } from "../../support/toolsnaps.js";

const tools = await allListedTools();
const TESTS = new URL("../tools/", import.meta.url);

describe("tool schemas", () => {
  it("has no snapshot for a tool that no longer exists", () => {
    const names = new Set(tools.map((t) => `${t.name}.json`));
    expect(readdirSync(TOOLSNAPS_DIR).filter((f) => !names.has(f))).toEqual([]);
  });

  it("has a unit test file for every tool", () => {
    expect(tools.map((t) => t.name).filter((name) => !existsSync(new URL(`${name}.test.ts`, TESTS)))).toEqual([]);
  });

  it.each(tools.map((t) => [t.name, t] as const))("%s has a title, a description, all four annotations and an output schema", (_name, tool) => {
    expect(tool.title).toBeTruthy();
    expect(tool.description!.length).toBeGreaterThan(40);
    for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
      expect(typeof tool.annotations?.[hint], hint).toBe("boolean");
    }
    expect(tool.outputSchema?.type).toBe("object");
    // No top-level unions: some clients cannot show them.
    expect(tool.inputSchema.type).toBe("object");
    expect(Object.keys(tool.inputSchema)).not.toContain("anyOf");
    expect(Object.keys(tool.inputSchema)).not.toContain("oneOf");
  });
});
