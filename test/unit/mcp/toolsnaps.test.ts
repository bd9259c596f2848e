// Every tool's schema as clients see it is snapshotted in test/__toolsnaps__/<tool>.json: a change
// fails here until the snapshot is updated on purpose (UPDATE_TOOLSNAPS=1 npx vitest run toolsnaps).
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { listedTools } from "../../../src/mcp/listing/listed-tools.js";

const DIR = new URL("../../__toolsnaps__/", import.meta.url);
const update = process.env.UPDATE_TOOLSNAPS === "1";
const tools = await listedTools({ OPENCODE_CONDUCTOR_TOOLSETS: "all" });

describe("tool schemas", () => {
  it.each(tools.map((t) => [t.name, t] as const))("%s matches its snapshot", (name, tool) => {
    const file = new URL(`${name}.json`, DIR);
    const json = `${JSON.stringify(tool, null, 2)}\n`;
    if (update || !existsSync(file)) {
      mkdirSync(DIR, { recursive: true });
      writeFileSync(file, json);
    }
    expect(json, `${name} changed: if on purpose, run UPDATE_TOOLSNAPS=1 npx vitest run --project unit toolsnaps`).toBe(readFileSync(file, "utf8"));
  });

  it("has no snapshot for a tool that no longer exists", () => {
    const names = new Set(tools.map((t) => `${t.name}.json`));
    expect(readdirSync(DIR).filter((f) => !names.has(f))).toEqual([]);
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
