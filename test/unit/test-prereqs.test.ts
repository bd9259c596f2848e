// scripts/test-prereqs.sh (run by `npm test`): one `apt-get update` per run, and only when a package
// is missing; each missing group installed, or the install command printed when not root. Run with
// a PATH of stand-ins: `id` says who we are, `apt-get` records its calls, and a stand-in per
// present command (chromium, redis-server, bwrap, socat, rg).
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const SCRIPT = fileURLToPath(new URL("../../scripts/test-prereqs.sh", import.meta.url));
const ALL = ["chromium", "redis-server", "bwrap", "socat", "rg"];
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tool(dir: string, name: string, body: string): void {
  writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, name), 0o755);
}

/** Runs the script in a project with dist/ built; returns the apt-get calls and stderr. */
async function run(o: { present: string[]; root: boolean; aptGet?: boolean; failInstall?: string }) {
  const dir = mkdtempSync(join(tmpdir(), "occ-prereqs-"));
  dirs.push(dir);
  const bin = join(dir, "bin");
  const log = join(dir, "apt-get.log");
  mkdirSync(bin);
  mkdirSync(join(dir, "dist"));
  writeFileSync(join(dir, "dist", "cli.js"), "");
  tool(bin, "id", `echo ${o.root ? 0 : 1000}`);
  if (o.aptGet !== false) tool(bin, "apt-get", `echo "$*" >> ${JSON.stringify(log)}\ncase "$*" in *${o.failInstall ?? "no-such-package"}*) exit 100;; esac`);
  for (const name of o.present) tool(bin, name, "exit 0");
  const { stderr } = await promisify(execFile)("/bin/sh", [SCRIPT], { cwd: dir, env: { PATH: bin } });
  const calls = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : [];
  return { calls, stderr };
}

describe("scripts/test-prereqs.sh", () => {
  it("does nothing when every package is there: no apt-get update", async () => {
    const r = await run({ present: ALL, root: true });
    expect(r.calls).toEqual([]);
    expect(r.stderr).toBe("");
  });

  it("updates once and installs each missing group when all are missing", async () => {
    const r = await run({ present: [], root: true });
    expect(r.calls).toEqual(["update -qq", "install -y -qq chromium", "install -y -qq redis-server", "install -y -qq bubblewrap socat ripgrep"]);
  });

  it("updates once for a single missing package", async () => {
    const r = await run({ present: ["chromium", "redis-server", "bwrap", "rg"], root: true });
    expect(r.calls).toEqual(["update -qq", "install -y -qq socat"]);
  });

  it("goes on with the other groups when one install fails, and says which", async () => {
    const r = await run({ present: ["bwrap", "socat", "rg"], root: true, failInstall: "chromium" });
    expect(r.calls).toEqual(["update -qq", "install -y -qq chromium", "install -y -qq redis-server"]);
    expect(r.stderr).toContain("apt-get could not install chromium");
  });

  it("does not call apt-get when not root, and prints the commands", async () => {
    const r = await run({ present: ["chromium"], root: false });
    expect(r.calls).toEqual([]);
    expect(r.stderr).toContain("Install: sudo apt-get install -y redis-server");
    expect(r.stderr).toContain("Install: sudo apt-get install -y bubblewrap socat ripgrep");
  });

  it("says to use the package manager where there is no apt-get", async () => {
    const r = await run({ present: ["chromium", "redis-server"], root: true, aptGet: false });
    expect(r.stderr).toContain(
      "bubblewrap socat ripgrep missing: needed by the srt sandbox test only. Install bubblewrap socat ripgrep with your package manager",
    );
  });
});
