// A write's temp file whose process is gone (killed or exited between write and rename) is removed
// by the next process that opens the state dir; a live writer's temp file and other files stay.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sweepDeadTemps } from "../../../src/core/state-dir.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("sweepDeadTemps", () => {
  it("removes the temp files of dead writers only", async () => {
    const dir = mkdtempSync(join(tmpdir(), "occ-state-sweep-"));
    dirs.push(dir);
    // A pid that was alive a moment ago and is not now: a child that has exited.
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout.trim();
    const files = {
      dead: `.instances.json.${dead}.0123abcd.tmp`,
      live: `.instances.json.${process.pid}.89abcdef.tmp`,
      target: "instances.json",
      other: `.notes.${dead}.tmp`, // not the writer's pattern: not ours to remove
    };
    for (const name of Object.values(files)) writeFileSync(join(dir, name), "{}");
    await sweepDeadTemps(dir);
    expect(existsSync(join(dir, files.dead))).toBe(false);
    for (const name of [files.live, files.target, files.other]) expect(existsSync(join(dir, name)), name).toBe(true);
  });

  it("is quiet about a dir that does not exist", async () => {
    await expect(sweepDeadTemps(join(tmpdir(), "occ-no-such-state-dir"))).resolves.toBeUndefined();
  });
});
