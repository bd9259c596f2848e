// The state dir's lock between processes: made whole in one step (a link naming its holder), held
// by one taker at a time, released by its holder only, broken when its holder is dead or it is old;
// the older lock files (a holder's pid and token as content) are read and broken the same way.
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import type * as FsPromises from "node:fs/promises";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { takeLock } from "../../../src/core/file-lock.js";

const require = createRequire(import.meta.url);
const dirs: string[] = [];
function lockIn(): string {
  const dir = mkdtempSync(join(tmpdir(), "occ-lock-"));
  dirs.push(dir);
  return join(dir, "thing.json.lock");
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// Above any pid_max (2^22), so never a live process.
const DEAD_PID = 99_999_999;
const exists = (path: string) => {
  try {
    lstatSync(path); // a link's own entry: existsSync would follow it to its (absent) target
    return true;
  } catch {
    return false;
  }
};

describe("takeLock", () => {
  it("makes a link naming this process, and its release removes it", async () => {
    const path = lockIn();
    const release = await takeLock(path, "thing.json");
    expect(lstatSync(path).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path)).toMatch(new RegExp(`^${process.pid} [0-9a-f]{12}$`));
    await release();
    expect(exists(path)).toBe(false);
  });

  it("lets one taker in at a time: the second gets the lock once the first releases it", async () => {
    const path = lockIn();
    const order: string[] = [];
    const first = await takeLock(path, "thing.json");
    const second = takeLock(path, "thing.json").then((release) => (order.push("second"), release));
    await new Promise((resolve) => setTimeout(resolve, 50));
    order.push("first releases");
    await first();
    await (
      await second
    )();
    expect(order).toEqual(["first releases", "second"]);
    expect(readdirSync(join(path, ".."))).toEqual([]);
  });

  it("breaks a lock whose holder is dead, as a link or as a lock file", async () => {
    const link = lockIn();
    symlinkSync(`${DEAD_PID} abc`, link);
    const file = lockIn();
    writeFileSync(file, `${DEAD_PID} abc`);
    for (const path of [link, file]) {
      await (
        await takeLock(path, "thing.json", { timeoutMs: 2_000 })
      )();
      expect(exists(path)).toBe(false);
    }
  });

  it("times out on a live holder's fresh lock, saying which file and what to do", async () => {
    const path = lockIn();
    const held = await takeLock(path, "thing.json");
    await expect(takeLock(path, "thing.json", { timeoutMs: 200 })).rejects.toThrow(
      /Could not lock thing\.json within 200 ms: .* Remove it if no conductor is running\./,
    );
    await held();
  });

  it("breaks a live holder's lock once it is older than staleMs", async () => {
    const path = lockIn();
    await takeLock(path, "thing.json"); // never released, as by a holder that hangs
    await new Promise((resolve) => setTimeout(resolve, 120));
    const release = await takeLock(path, "thing.json", { staleMs: 100, timeoutMs: 2_000 });
    const token = readlinkSync(path);
    await release();
    expect(exists(path)).toBe(false);
    expect(token).toMatch(new RegExp(`^${process.pid} `));
  });

  it("does not remove a lock that was broken as stale and taken by another", async () => {
    const path = lockIn();
    const stale = await takeLock(path, "thing.json", { staleMs: 100 });
    await new Promise((resolve) => setTimeout(resolve, 120));
    const taker = await takeLock(path, "thing.json", { staleMs: 100, timeoutMs: 2_000 });
    const takers = readlinkSync(path);
    await stale(); // older than staleMs / 2: it reads the holder, sees another token, leaves it
    expect(readlinkSync(path)).toBe(takers);
    await taker();
    expect(exists(path)).toBe(false);
  });
});

describe("takeLock where links are refused (Windows without the right to make them)", () => {
  it("takes, holds and releases a lock file instead", async () => {
    // symlink(2) answering EPERM, as Windows does: the built-in module patched for this test only.
    const promises = require("node:fs/promises") as typeof FsPromises;
    const real = promises.symlink;
    promises.symlink = () => Promise.reject(Object.assign(new Error("EPERM: operation not permitted, symlink"), { code: "EPERM" }));
    syncBuiltinESMExports();
    try {
      const path = lockIn();
      const release = await takeLock(path, "thing.json");
      expect(lstatSync(path).isFile()).toBe(true);
      expect(readFileSync(path, "utf8")).toMatch(new RegExp(`^${process.pid} [0-9a-f]{12}$`));
      await expect(takeLock(path, "thing.json", { timeoutMs: 150 })).rejects.toThrow(/Could not lock thing\.json/);
      await release();
      expect(exists(path)).toBe(false);
    } finally {
      promises.symlink = real;
      syncBuiltinESMExports();
    }
  });
});
