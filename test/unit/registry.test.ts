// The leak registry behind the e2e global teardown, exercised with a harmless sleeping child
// process instead of opencode.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, orphaned, ownedBy, readEntries, registerPid, registerRoot, sweep, unregisterPid, unregisterRoot } from "../support/registry.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "occ-registry-test-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function sleeper() {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000) // occ-registry-sleeper"], { detached: true, stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { pid: child.pid!, exited, kill: () => child.kill("SIGKILL") };
}

describe("test process registry", () => {
  it("records who started an entry and forgets it on unregister", () => {
    registerPid(12345, "opencode", "/tmp/occ-test-x", dir);
    registerRoot("/tmp/occ-test-x", dir);
    const entries = readEntries(dir);
    expect(entries).toHaveLength(2);
    expect(entries.find((e) => e.kind === "pid")).toMatchObject({ pid: 12345, owner: process.pid, ownerParent: process.ppid });
    expect(entries[0]?.startedBy).toMatch(/registry\.test\.ts$/);
    unregisterPid(12345, dir);
    unregisterRoot("/tmp/occ-test-x", dir);
    expect(readEntries(dir)).toEqual([]);
  });

  it("sweep kills a registered live process, removes its root and reports both", async () => {
    const child = sleeper();
    const root = mkdtempSync(join(tmpdir(), "occ-registry-root-"));
    try {
      registerPid(child.pid, "occ-registry-sleeper", root, dir);
      registerRoot(root, dir);
      const problems = sweep(ownedBy(process.pid), dir);
      expect(problems).toEqual([
        expect.stringMatching(new RegExp(`^leaked opencode server pid ${child.pid} started by .*registry\\.test\\.ts \\(was still running: killed\\)$`)),
        expect.stringMatching(/^leaked temp root .*occ-registry-root-/),
      ]);
      await child.exited;
      expect(isAlive(child.pid)).toBe(false);
      expect(existsSync(root)).toBe(false);
      expect(readEntries(dir)).toEqual([]);
    } finally {
      child.kill();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("never kills a process whose command line does not match (a reused pid)", async () => {
    const child = sleeper();
    try {
      registerPid(child.pid, "definitely-not-this-process", undefined, dir);
      expect(sweep(ownedBy(process.pid), dir)[0]).toMatch(/never stopped; already exited/);
      expect(isAlive(child.pid)).toBe(true);
    } finally {
      child.kill();
      await child.exited;
    }
  });

  it("treats entries as orphaned only when their writer and its parent are gone", async () => {
    const gone = sleeper();
    gone.kill();
    await gone.exited;
    const entry = { kind: "root", root: "/nonexistent/occ-test-x", owner: gone.pid, ownerParent: gone.pid, startedBy: "x", startedAt: 0 } as const;
    writeFileSync(join(dir, "root-occ-test-x.json"), JSON.stringify(entry));
    expect(orphaned(entry)).toBe(true);
    expect(orphaned({ ...entry, ownerParent: process.pid })).toBe(false);
    expect(sweep(orphaned, dir)).toEqual([]); // root already gone: nothing to report
    expect(readEntries(dir)).toEqual([]);
  });
});
