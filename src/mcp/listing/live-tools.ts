// built-tools.json as the current tool definitions give it: what write-built-tools.ts writes when
// the package is built, and what the unit test compares the file with (built-tools.ts).
import type { ToolDef } from "../tool-def.js";
import { ALL_TOOLS } from "../tools/index.js";
import type { BuiltTool } from "./built-tools.js";
import { listedSchemas } from "./compact-listing.js";

/** One tool's entry: its definition without shapes and code, and its listed JSON Schemas converted now. */
export function liveTool(def: ToolDef): Omit<BuiltTool, "name"> {
  return {
    title: def.title,
    description: def.description,
    toolset: def.toolset,
    annotations: def.annotations,
    ...(def.guide ? { guide: def.guide } : {}),
    ...(def.readOnlyMode ? { readOnlyMode: def.readOnlyMode } : {}),
    ...listedSchemas(def),
  };
}

/** Every tool's entry by name, in ALL_TOOLS's order. */
export function liveTools(): Record<string, Omit<BuiltTool, "name">> {
  return Object.fromEntries(ALL_TOOLS.map((def) => [def.name, liveTool(def)]));
}
