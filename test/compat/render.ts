// npm run test:compat -- --render: rewrites docs/compatibility.md from spec/compatibility.json
// without running anything (after a change to the report's layout).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CompatibilityData } from "../../src/core/engine/server/compatibility.js";
import { renderMarkdown } from "./report.js";

const ROOT = join(import.meta.dirname, "..", "..");
export function renderDocs(): void {
  const data = JSON.parse(readFileSync(join(ROOT, "spec", "compatibility.json"), "utf8")) as CompatibilityData;
  writeFileSync(join(ROOT, "docs", "compatibility.md"), renderMarkdown(data));
}
