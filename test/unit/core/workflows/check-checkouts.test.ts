// A fleet worktree step's check runs in a checkout in the repository's git dir (fleet-repo.ts). A
// walker SIGKILLed during a check leaves that checkout; the next check on the same machine removes
// it, and leaves alone a checkout of a live walker and one made on another machine.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inCheckout } from "../../../../src/core/workflows/steps/fleet-repo.js";
import { makeRepo, type TestRepo } from "../../../support/git-repo.js";

let r: TestRepo;
beforeEach(async () => {
  r = await makeRepo("occ-wf-checks-");
});
afterEach(async () => {
  await r.close();
});

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.on("exit", resolve));
  return child.pid!;
}

const host = hostname().replace(/[^A-Za-z0-9-]/g, "") || "host";
const worktreePaths = async () => (await r.git("worktree", "list", "--porcelain")).split("\n").flatMap((l) => (l.startsWith("worktree ") ? [l.slice(9)] : []));

describe("a check's checkout", () => {
  it("is removed after the check, and a killed walker's is removed by the next check on this machine", async () => {
    const head = (await r.git("rev-parse", "HEAD")).trim();
    const checks = join(r.repo, ".git", "conductor-checks");
    const left = join(checks, `${host}.${await deadPid()}.${head.slice(0, 12)}-dead`);
    const live = join(checks, `${host}.1.${head.slice(0, 12)}-live`);
    const elsewhere = join(checks, `another-machine.${await deadPid()}.${head.slice(0, 12)}-away`);
    for (const at of [left, live, elsewhere]) await r.git("worktree", "add", "--quiet", "--detach", at, head);

    let seen = "";
    const answer = await inCheckout(r.repo, head, async (dir) => {
      seen = dir;
      expect(existsSync(join(dir, "shared.txt"))).toBe(true);
      return "checked";
    });

    expect(answer).toBe("checked");
    expect(seen.startsWith(join(checks, `${host}.${process.pid}.`))).toBe(true);
    expect(existsSync(seen)).toBe(false);
    expect(existsSync(left)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(elsewhere)).toBe(true);
    const paths = await worktreePaths();
    expect(paths).not.toContain(left);
    expect(paths).not.toContain(seen);
    expect(paths).toEqual(expect.arrayContaining([live, elsewhere]));
  });
});
