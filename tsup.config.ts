import { defineConfig } from "tsup";

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
});
