import { execFileSync } from "node:child_process";
import { defineConfig } from "tsup";
import { writeClaudePlugin } from "./scripts/claude-plugin.js";

// What a start needs of each tool (its listing, its instruction lines, tools/list's JSON Schemas converted
// from the zod shapes) is written here, before bundling, and bundled as JSON: a start lists the
// tools without loading their modules (src/mcp/listing/built-tools.ts).
execFileSync(process.execPath, ["--import", "tsx", "src/mcp/listing/write-built-tools.ts"], { stdio: "inherit" });

export default defineConfig({
  // The worker is loaded by URL next to the chunk that starts it (src/mcp/api/checker.ts).
  entry: { index: "src/index.ts", fleet: "src/fleet.ts", cli: "src/cli.ts", "check-worker": "src/mcp/api/check-worker.ts" },
  format: ["esm"],
  target: "node20",
  platform: "node",
  dts: { entry: { index: "src/index.ts", fleet: "src/fleet.ts" } },
  sourcemap: true,
  clean: true,
  splitting: true,
  // The Claude Code plugin of this checkout exists only once it is built (scripts/claude-plugin.mjs).
  onSuccess: async () => {
    writeClaudePlugin();
  },
});
