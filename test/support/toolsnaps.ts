// Tool schemas as clients see them (tools/list with every toolset), and their snapshots in
// test/__toolsnaps__/<tool>.json: a change fails until the snapshot is updated on purpose with
// UPDATE_TOOLSNAPS=1 (then `npm run docs:tools`).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
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

export function expectToolsnap(tool: Tool): void {
  const file = new URL(`${tool.name}.json`, TOOLSNAPS_DIR);
  const json = `${JSON.stringify(tool, null, 2)}\n`;
  if (process.env.UPDATE_TOOLSNAPS === "1" || !existsSync(file)) {
    mkdirSync(TOOLSNAPS_DIR, { recursive: true });
    writeFileSync(file, json);
  }
  expect(json, `${tool.name} changed: if on purpose, run UPDATE_TOOLSNAPS=1 npm run test:unit, then npm run docs:tools`).toBe(readFileSync(file, "utf8"));
}
