// opencode's own temp folder (src/client/scratch.ts): made inside the TMPDIR it was given, removed
// with what was written into it, and a TMPDIR that cannot hold one is no failure.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { scratchFor } from "../../../src/client/scratch.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("scratchFor", () => {
  it("makes a folder inside the given TMPDIR, sets it as the child's TMPDIR, and removes it with its files", () => {
    const parent = mkdtempSync(join(tmpdir(), "occ-scratch-test-"));
    made.push(parent);
    const s = scratchFor({ PATH: "/usr/bin", TMPDIR: parent });
    expect(dirname(s.dir)).toBe(parent);
    expect(s.env).toEqual({ PATH: "/usr/bin", TMPDIR: s.dir, BUN_TMPDIR: s.dir });
    writeFileSync(join(s.dir, ".fbeff9affeeffcff-00000000.so"), "a native library opencode unpacked");
    s.remove();
    expect(existsSync(s.dir)).toBe(false);
    s.remove(); // twice is fine: the exit handler and the supervisor both remove it
  });

  it("falls back to this process's temp dir when the TMPDIR given does not exist", () => {
    const s = scratchFor({ TMPDIR: join(tmpdir(), "occ-no-such-dir", "deeper") });
    made.push(s.dir);
    expect(dirname(s.dir)).toBe(tmpdir());
    expect(s.env.TMPDIR).toBe(s.dir);
    s.remove();
    expect(existsSync(s.dir)).toBe(false);
  });
});
