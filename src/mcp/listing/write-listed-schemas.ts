// Writes listed-schemas.json (precomputed-schemas.ts): every tool's tools/list schemas converted
// from its zod shapes. Run by the build (tsup.config.ts) before bundling: `npx tsx src/mcp/listing/write-listed-schemas.ts`.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { liveSchemas } from "./precomputed-schemas.js";

const file = fileURLToPath(new URL("./listed-schemas.json", import.meta.url));
// Formatted as the repository's prettier check wants it, and written only when it changed.
const text = await format(JSON.stringify(liveSchemas()), { ...(await resolveConfig(file)), parser: "json" });
let before: string | undefined;
try {
  before = readFileSync(file, "utf8");
} catch {
  before = undefined;
}
if (text !== before) writeFileSync(file, text);
