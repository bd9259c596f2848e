// The tool cache stays bounded (test/support/tool-cache.ts): what a run used is kept, an entry
// unused for 30 days goes, so do builds of an older 2.x source, what a killed run left half done,
// and bun's package cache of the earlier layout; by default it lives in the checkout, not in the
// system temp dir or in HOME's own folders.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { pruneToolCache, TOOL_CACHE } from "../support/tool-cache.js";

const cache = mkdtempSync(join(tmpdir(), "occ-tool-cache-test-"));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

const DAY = 86_400_000;
const now = Date.now();
/** A folder of the cache, finished (its marker) or not, last used `ageDays` ago. */
function entry(path: string, ageDays: number, complete = true): void {
  const dir = join(cache, path);
  mkdirSync(dir, { recursive: true });
  const stamp = new Date(now - ageDays * DAY);
  if (complete) {
    writeFileSync(join(dir, ".complete"), "");
    utimesSync(join(dir, ".complete"), stamp, stamp);
  }
  utimesSync(dir, stamp, stamp);
}

describe("the tool cache", () => {
  it("is the checkout's node_modules/.cache/occ-tool-cache unless OCC_TOOL_CACHE says otherwise: not the system temp dir, not HOME", () => {
    const checkout = fileURLToPath(new URL("../../", import.meta.url));
    expect(TOOL_CACHE).toBe(process.env.OCC_TOOL_CACHE || join(checkout, "node_modules", ".cache", "occ-tool-cache"));
    if (!process.env.OCC_TOOL_CACHE) expect(TOOL_CACHE.startsWith(tmpdir())).toBe(false);
  });

  it("keeps what was used lately and removes the rest, saying why", async () => {
    entry("npm/opencode-linux-x64@1.18.34", 2);
    entry("npm/opencode-linux-x64@1.1.11", 45);
    entry("npm/bun@1.4.5.staging-abc", 3, false);
    entry("npm/fresh.staging-def", 0, false); // another worker installing right now
    entry("opencode2/aaaaaaaaaaaaaaaa", 1);
    entry("opencode2/bbbbbbbbbbbbbbbb", 1);
    entry("bun-install-cache", 1, false);
    const removed = await pruneToolCache({ cache, now, keep: { opencode2: "aaaaaaaaaaaaaaaa" } });
    expect(removed.sort()).toEqual(
      [
        `${join(cache, "bun-install-cache")} (no longer used)`,
        `${join(cache, "npm/bun@1.4.5.staging-abc")} (unfinished, left by a killed run)`,
        `${join(cache, "npm/opencode-linux-x64@1.1.11")} (unused for 30 days)`,
        `${join(cache, "opencode2/bbbbbbbbbbbbbbbb")} (built from an older source)`,
      ].sort(),
    );
    expect(await pruneToolCache({ cache, now, keep: { opencode2: "aaaaaaaaaaaaaaaa" } })).toEqual([]);
  });
});
