// A write's temp file whose process is gone (killed or exited between write and rename) is removed
// by the next process that opens the state dir; a live writer's temp file and other files stay. A
// process that exits during a write removes its own temp file.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { sweepDeadTemps } from "../../../src/core/state-dir.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
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

describe("a process that exits during a write", () => {
  it("removes its own temp file on the way out, and leaves the target as it was", async () => {
    const dir = mkdtempSync(join(tmpdir(), "occ-state-exit-"));
    dirs.push(dir);
    writeFileSync(join(dir, "instances.json"), "{}");
    // A large write, so the exit lands after the temp file exists and before its rename; the child
    // says whether it saw the temp file, so the test cannot pass without the case it is about.
    const script = `
import { readdirSync } from "node:fs";
import { writeTextAtomic } from "./src/core/state-dir.ts";
void writeTextAtomic(${JSON.stringify(join(dir, "instances.json"))}, "x".repeat(64 * 1024 * 1024));
const look = () => {
  if (readdirSync(${JSON.stringify(dir)}).some((n) => n.endsWith(".tmp"))) { process.stdout.write("saw"); process.exit(0); }
  setImmediate(look);
};
look();
`;
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "--eval", script], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect({ status: child.status, out: child.stdout, err: child.stderr.slice(0, 500) }).toEqual({ status: 0, out: "saw", err: "" });
    expect(readdirSync(dir)).toEqual(["instances.json"]);
    expect(readFileSync(join(dir, "instances.json"), "utf8")).toBe("{}");
  });
});
