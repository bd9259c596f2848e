// tools/list's JSON Schemas of every tool, converted from the zod shapes when the package is built
// (write-listed-schemas.ts, run by tsup.config.ts), so that a start lists its tools without
// converting 19 zod objects to JSON Schema first (docs/performance.md, "Start-up"). A unit test
// (test/unit/mcp/tool-listing.test.ts) fails when listed-schemas.json differs from a conversion
// of the current shapes, byte for byte: `npm run build` writes it again.
import type { ToolDef } from "../tool-def.js";
import { ALL_TOOLS } from "../tools/index.js";
import { listedSchemas, type ListedSchemas } from "./compact-listing.js";
import LISTED from "./listed-schemas.json" with { type: "json" };

const BUILT = LISTED as unknown as Record<string, ListedSchemas>;

/** The schemas converted at build time for a tool of this package; any other definition is converted now. */
export function builtSchemas(def: ToolDef): ListedSchemas {
  const built = ALL_TOOLS.includes(def) ? BUILT[def.name] : undefined;
  return built ?? listedSchemas(def);
}

/** Every tool's schemas as the build writes them, in ALL_TOOLS's order. */
export function liveSchemas(): Record<string, ListedSchemas> {
  return Object.fromEntries(ALL_TOOLS.map((def) => [def.name, listedSchemas(def)]));
}
