// Writes built-tools.json (built-tools.ts): every tool's definition without its shapes and code, and
// its tools/list schemas converted from its zod shapes. Run by the build (tsup.config.ts) before
// bundling: `npx tsx src/mcp/listing/write-built-tools.ts`.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { liveTools } from "./live-tools.js";

const file = fileURLToPath(new URL("./built-tools.json", import.meta.url));
// Formatted as the repository's prettier check wants it, and written only when it changed.
const text = await format(JSON.stringify(liveTools()), { ...(await resolveConfig(file)), parser: "json" });
let before: string | undefined;
try {
  before = readFileSync(file, "utf8");
} catch {
  before = undefined;
}
if (text !== before) writeFileSync(file, text);
