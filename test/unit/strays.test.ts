// The teardown's stray check (test/support/strays.ts): a process that left the runner's tree but
// whose environment names the run folder is found and, once its grace is over, killed; one that
// names another folder is not.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stillRunning, untilGone, type ProcessInfo } from "../support/process-tree.js";
import { strays, sweepStrays } from "../support/strays.js";

const roots: string[] = [];
const started: ProcessInfo[] = [];
afterEach(async () => {
  for (const p of stillRunning(started.splice(0))) process.kill(p.pid, "SIGKILL");
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** Starts `sleep 300` reparented away from us (its sh exits at once), with HOME set to `home`. */
async function orphanWith(home: string): Promise<number> {
  const sh = spawn("sh", ["-c", "sleep 300 & echo $!"], { env: { ...process.env, HOME: home }, stdio: ["ignore", "pipe", "ignore"] });
  const pid = await new Promise<number>((resolve) => sh.stdout.once("data", (d: Buffer) => resolve(Number(String(d).trim()))));
  await new Promise((r) => sh.once("exit", r));
  return pid;
}

describe("processes that outlived the run", () => {
  it("finds and kills an orphan whose HOME is under the run folder, not one elsewhere", async () => {
    const root = mkdtempSync(join(tmpdir(), "strays-"));
    const other = mkdtempSync(join(tmpdir(), "strays-other-"));
    roots.push(root, other);
    const mine = await orphanWith(join(root, "home"));
    const theirs = await orphanWith(other);
    const found = strays(root);
    started.push(...found, ...strays(other));
    expect(found.map((p) => p.pid)).toEqual([mine]);
    expect(strays(other).map((p) => p.pid)).toEqual([theirs]);
    const lines = await sweepStrays(root, process.pid, 200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("sleep 300");
    expect(await untilGone(found, 10_000)).toEqual([]);
    expect(strays(other).map((p) => p.pid)).toEqual([theirs]);
  });

  it("leaves the runner's own tree alone", async () => {
    const root = mkdtempSync(join(tmpdir(), "strays-"));
    roots.push(root);
    const child = spawn("sleep", ["300"], { env: { ...process.env, HOME: root }, stdio: "ignore" });
    try {
      await new Promise((r) => child.once("spawn", r));
      expect(strays(root)).toEqual([]);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
