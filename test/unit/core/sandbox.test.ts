// The srt settings generated for an instance: writes only to the directory, its git dirs, opencode's
// XDG dirs and the scratch dir; credential paths and .env files unreadable; network = loopback +
// allowlist. And resolveSrt refuses a path that is not an executable.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gitDirs, resolveSrt, srtSettings } from "../../../src/core/instances/sandbox.js";

describe("srtSettings", () => {
  const env = { HOME: "/home/u", XDG_DATA_HOME: "/xdg/data" };
  const settings = srtSettings({ directory: "/work/p", env, scratch: "/state/sandbox/ab", hide: ["/state"], allowedDomains: ["api.example.com"] }) as {
    network: { allowedDomains: string[] };
    filesystem: { allowWrite: string[]; denyRead: string[] };
  };

  it("allows writes to the directory, .git, opencode's XDG dirs and the scratch dir only", () => {
    expect(settings.filesystem.allowWrite).toEqual([
      "/work/p",
      "/work/p/.git",
      "/xdg/data/opencode",
      "/home/u/.config/opencode",
      "/home/u/.local/state/opencode",
      "/home/u/.cache/opencode",
      "/state/sandbox/ab",
    ]);
  });

  it("denies reads of credential paths, .env files and the hidden state dir", () => {
    for (const p of [".ssh", ".aws", ".config/gh", ".netrc", ".npmrc", ".kube", ".docker/config.json"])
      expect(settings.filesystem.denyRead).toContain(`/home/u/${p}`);
    expect(settings.filesystem.denyRead).toContain("/work/p/**/.env*");
    expect(settings.filesystem.denyRead).toContain("/state");
  });

  it("limits the network to loopback plus the allowlist", () => {
    expect(settings.network.allowedDomains).toEqual(["127.0.0.1", "localhost", "api.example.com"]);
  });
});

describe("gitDirs", () => {
  it("follows a worktree's .git file to its gitdir and common dir", () => {
    const root = mkdtempSync(join(tmpdir(), "occ-gitdirs-"));
    const common = join(root, "main", ".git");
    const gitdir = join(common, "worktrees", "wt");
    mkdirSync(gitdir, { recursive: true });
    writeFileSync(join(gitdir, "commondir"), "../..\n");
    mkdirSync(join(root, "wt"));
    writeFileSync(join(root, "wt", ".git"), `gitdir: ${gitdir}\n`);
    try {
      expect(gitDirs(join(root, "wt"))).toEqual([join(root, "wt", ".git"), gitdir, common]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("resolveSrt", () => {
  it("refuses a missing srt with a clear error", () => {
    expect(() => resolveSrt("/nonexistent/srt")).toThrow(/\/nonexistent\/srt is not an executable srt.*not started/);
  });
});
