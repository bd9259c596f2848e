// The lock that keeps two test workers from building the 2.x binary at the same time: the second
// waits for the first, a lock left by a dead process is taken over, and waiting is bounded.
import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { acquireLock } from "../support/opencode2-build.js";

const dir = mkdtempSync(join(tmpdir(), "occ-lock-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the 2.x build lock", () => {
  it("lets one holder in at a time: the second acquires only after the first released", async () => {
    const file = join(dir, "a.lock");
    const order: string[] = [];
    const releaseFirst = await acquireLock(file);
    order.push("first in");
    const second = acquireLock(file).then((release) => {
      order.push("second in");
      return release;
    });
    // While the first holds it, a bounded attempt fails, and the waiting second is still outside.
    await expect(acquireLock(file, 600)).rejects.toThrow(/another test run/);
    expect(order).toEqual(["first in"]);
    order.push("first out");
    await releaseFirst();
    const releaseSecond = await second;
    expect(order).toEqual(["first in", "first out", "second in"]);
    await releaseSecond();
    expect(existsSync(file)).toBe(false);
  });

  it("takes over a lock whose holder is gone", async () => {
    const file = join(dir, "b.lock");
    writeFileSync(file, "999999999"); // no such pid
    const release = await acquireLock(file, 5_000);
    await release();
  });

  it("gives up after the wait limit with a message that says what to do", async () => {
    const file = join(dir, "c.lock");
    writeFileSync(file, String(process.pid)); // held by a live process (this one)
    await expect(acquireLock(file, 600)).rejects.toThrow(/another test run has been building opencode 2\.x .*remove the lock if no build is running/);
  });
});
