// What a start needs of each tool, written when the package is built (write-built-tools.ts, run by
// tsup.config.ts, from live-tools.ts): its name, description, toolset, annotations, instruction
// lines and tools/list's JSON Schemas. A start lists its tools and writes its instructions from
// this file alone; a tool's module (its zod shapes, its run, the core it calls) loads on its first
// call (lazy-tool.ts, docs/performance.md "Start-up"). A unit test (test/unit/mcp/tool-listing.test.ts)
// fails when built-tools.json differs from live-tools.ts's reading of the current tools by a byte:
// `npm run build` writes it again.
import type { ToolDef } from "../tool-def.js";
import type { ListedSchemas } from "./compact-listing.js";
import BUILT from "./built-tools.json" with { type: "json" };

/** A tool as the start knows it: everything but its shapes and its code. */
export type BuiltTool = Pick<ToolDef, "name" | "title" | "description" | "toolset" | "annotations" | "guide" | "readOnlyMode"> & ListedSchemas;

/** Every tool of this package, in tools/list order (the order of tools/index.ts). */
export const BUILT_TOOLS: readonly BuiltTool[] = Object.entries(BUILT as unknown as Record<string, Omit<BuiltTool, "name">>).map(([name, tool]) => ({
  name,
  ...tool,
}));
