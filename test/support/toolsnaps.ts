// Tool schemas as clients see them (tools/list with every toolset), and their snapshots in
// test/__toolsnaps__/<tool>.json: a change fails until the snapshot is updated on purpose with
// UPDATE_TOOLSNAPS=1 (then `npm run docs:tools`). In CI (`CI` set, as CI services and .ci/run set
// it) nothing is ever written: a missing snapshot fails, so deleting one cannot pass unnoticed.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { Tool } from "@modelcontextprotocol/server";
import { expect } from "vitest";
import { listedTools } from "../../src/mcp/listing/listed-tools.js";

export const TOOLSNAPS_DIR = new URL("../__toolsnaps__/", import.meta.url);

let all: Promise<Tool[]> | undefined;
/** Every tool as tools/list shows it with OPENCODE_CONDUCTOR_TOOLSETS=all. */
export function allListedTools(): Promise<Tool[]> {
  return (all ??= listedTools({ OPENCODE_CONDUCTOR_TOOLSETS: "all" }));
}

export async function listedTool(name: string): Promise<Tool> {
  const tool = (await allListedTools()).find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} in tools/list`);
  return tool;
}

/** The input schema's properties, typed loosely for expectations. */
export function inputProperties(tool: Tool): Record<string, Record<string, any>> {
  return (tool.inputSchema.properties ?? {}) as Record<string, Record<string, any>>;
}

/** True in CI (vitest's own rule: `CI` set to anything but "false"/"0"), where snapshots are only read. */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== "" && ci !== "false" && ci !== "0";
}

/**
 * What to do with a tool's snapshot: "compare" (it exists), "write" (asked for, or a new tool's
 * first snapshot outside CI), or "missing" (CI never writes one: the test fails).
 */
export function snapshotMode(exists: boolean, env: NodeJS.ProcessEnv = process.env): "compare" | "write" | "missing" {
  if (inCi(env)) return exists ? "compare" : "missing";
  if (env.UPDATE_TOOLSNAPS === "1" || !exists) return "write";
  return "compare";
}

export function expectToolsnap(tool: Tool): void {
  const file = new URL(`${tool.name}.json`, TOOLSNAPS_DIR);
  const json = `${JSON.stringify(tool, null, 2)}\n`;
  const mode = snapshotMode(existsSync(file));
  if (mode === "missing")
    throw new Error(
      `test/__toolsnaps__/${tool.name}.json is missing, and CI never writes a snapshot: run UPDATE_TOOLSNAPS=1 npx vitest run --project unit test/unit/tools/${tool.name}.test.ts outside CI, review it and commit it`,
    );
  if (mode === "write") {
    mkdirSync(TOOLSNAPS_DIR, { recursive: true });
    writeFileSync(file, json);
  }
  expect(json, `${tool.name} changed: if on purpose, run UPDATE_TOOLSNAPS=1 npm run test:unit, then npm run docs:tools`).toBe(readFileSync(file, "utf8"));
}
