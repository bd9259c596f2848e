// install / uninstall on real files in temp folders: each client and scope writes its entry and the
// skill, a second install changes nothing, an existing entry is kept without --force, and
// uninstall leaves every file as it was, byte for byte (or takes only our part out of a file that
// changed since). --dry-run output is snapshot-tested.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { afterEach, describe, expect, it } from "vitest";
import { install, InstallError, uninstall } from "../../../src/install/install.js";
import type { Launch } from "../../../src/install/launch-command.js";
import { skillSource } from "../../../src/install/skill.js";
import { targetFor, type Client, type Scope } from "../../../src/install/targets.js";

const launch: Launch = { command: "npx", args: ["-y", "opencode-conductor"], how: "npx" };
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function sandbox() {
  const root = mkdtempSync(join(tmpdir(), "occ-install-"));
  roots.push(root);
  const places = { home: join(root, "home"), xdgConfig: join(root, "home", ".config", "opencode"), project: join(root, "project") };
  mkdirSync(places.home, { recursive: true });
  mkdirSync(places.project, { recursive: true });
  const stateDir = join(root, "state");
  return { root, places, stateDir, opts: (client: Client, scope: Scope) => ({ client, scope, launch, places, stateDir }) };
}

/** Every file under the sandbox's home and project, with its bytes. */
function snapshotFiles(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
      const path = join(dir, name.name);
      if (name.isDirectory()) walk(path);
      else out[path.slice(root.length)] = readFileSync(path, "utf8");
    }
  };
  walk(join(root, "home"));
  walk(join(root, "project"));
  return out;
}

// What a user may already have in each file the installs touch.
function seed(places: { home: string; xdgConfig: string; project: string }) {
  const put = (path: string, text: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  };
  put(join(places.home, ".claude.json"), '{"numStartups":3,"mcpServers":{"other":{"command":"x"}}}');
  put(join(places.home, ".codex", "config.toml"), 'model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n');
  put(join(places.home, ".codex", "AGENTS.md"), "# My rules\n\nBe brief.");
  put(join(places.home, ".gemini", "settings.json"), '{\n  "theme": "dark"\n}\n');
  put(join(places.xdgConfig, "opencode.json"), '{"$schema":"https://opencode.ai/config.json"}');
  put(join(places.project, "AGENTS.md"), "Project notes\n");
}

const cases: Array<[Client, Scope]> = [
  ["claude", "user"],
  ["claude", "project"],
  ["codex", "user"],
  ["gemini", "user"],
  ["gemini", "project"],
  ["cursor", "user"],
  ["cursor", "project"],
  ["opencode", "user"],
  ["opencode", "project"],
];

describe("install and uninstall", () => {
  it.each(cases)("%s (%s scope): writes the entry and the skill, is idempotent, and uninstall restores every byte", async (client, scope) => {
    for (const seeded of [false, true]) {
      const s = sandbox();
      if (seeded) seed(s.places);
      const before = snapshotFiles(s.root);
      const report = await install(s.opts(client, scope));
      expect(report).toMatch(/^Installed opencode-conductor/);
      const after = snapshotFiles(s.root);
      for (const edit of targetFor(client, scope, launch, s.places).edits) {
        const text = readFileSync(edit.path, "utf8");
        if (edit.kind === "json" || edit.kind === "toml")
          expect(edit.kind === "json" ? JSON.parse(text) : parseToml(text)).toMatchObject(
            edit.key.reduceRight<Record<string, unknown>>((acc, k) => ({ [k]: acc }), edit.value),
          );
        else expect(text).toContain(edit.kind === "file" ? edit.text.slice(-200) : edit.body.trimEnd().slice(-200));
      }
      // Whatever the user had stays.
      if (seeded && client === "claude" && scope === "user")
        expect(JSON.parse(readFileSync(join(s.places.home, ".claude.json"), "utf8"))).toMatchObject({
          numStartups: 3,
          mcpServers: { other: { command: "x" } },
        });
      expect(await install(s.opts(client, scope))).toMatch(/already installed/);
      expect(snapshotFiles(s.root)).toEqual(after);
      expect(await uninstall(s.opts(client, scope))).toMatchObject({ complete: true });
      expect(snapshotFiles(s.root)).toEqual(before);
    }
  });

  it("the skill file is the one source, front matter and all", async () => {
    const s = sandbox();
    await install(s.opts("claude", "user"));
    expect(readFileSync(join(s.places.home, ".claude", "skills", "opencode-delegate", "SKILL.md"), "utf8")).toBe(skillSource());
    expect(skillSource()).toMatch(/^---\nname: opencode-delegate\ndescription: .+\n---\n/);
  });

  it("keeps an existing entry of the same name unless --force", async () => {
    const s = sandbox();
    mkdirSync(join(s.places.home, ".gemini"), { recursive: true });
    writeFileSync(join(s.places.home, ".gemini", "settings.json"), '{"mcpServers":{"opencode":{"command":"mine"}}}');
    await expect(install(s.opts("gemini", "user"))).rejects.toThrow(
      /already has an entry "mcpServers" › "opencode" that does not start opencode-conductor: pass --force/,
    );
    await install({ ...s.opts("gemini", "user"), force: true });
    expect(JSON.parse(readFileSync(join(s.places.home, ".gemini", "settings.json"), "utf8")).mcpServers.opencode.command).toBe("npx");
    await uninstall(s.opts("gemini", "user"));
    expect(readFileSync(join(s.places.home, ".gemini", "settings.json"), "utf8")).toBe('{"mcpServers":{"opencode":{"command":"mine"}}}');
  });

  it("a file changed since the install loses only our entry", async () => {
    const s = sandbox();
    await install(s.opts("cursor", "project"));
    const path = join(s.places.project, ".cursor", "mcp.json");
    const changed = JSON.parse(readFileSync(path, "utf8"));
    changed.mcpServers.later = { command: "added after" };
    writeFileSync(path, JSON.stringify(changed));
    expect((await uninstall(s.opts("cursor", "project"))).report).toMatch(/take our entry out of .*mcp\.json/);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ mcpServers: { later: { command: "added after" } } });
  });

  it("refuses what it cannot do, saying what to do instead", async () => {
    const s = sandbox();
    await expect(install(s.opts("codex", "project"))).rejects.toThrow(/~\/\.codex\/config\.toml only: use --scope user/);
    await expect(install({ ...s.opts("claude", "user"), client: "vim" })).rejects.toBeInstanceOf(InstallError);
    await expect(install({ ...s.opts("claude", "user"), scope: "global" })).rejects.toThrow(/use user or project/);
    mkdirSync(join(s.places.project, ".cursor"), { recursive: true });
    writeFileSync(join(s.places.project, ".cursor", "mcp.json"), "{ not json");
    await expect(install(s.opts("cursor", "project"))).rejects.toThrow(/mcp\.json is not valid JSON \(line 1: /);
    expect((await uninstall(s.opts("opencode", "user"))).report).toMatch(/not installed/);
  });

  it.each(cases)("--dry-run for %s (%s scope) shows the change and writes nothing", async (client, scope) => {
    const s = sandbox();
    const report = await install({ ...s.opts(client, scope), dryRun: true });
    expect(snapshotFiles(s.root)).toEqual({});
    expect(report.split(s.root).join("<tmp>")).toMatchSnapshot();
  });
});

describe("how the client starts the server", () => {
  it("from a clone: node and the clone's dist/cli.js; from an npx cache: npx again", async () => {
    const { detectLaunch } = await import("../../../src/install/launch-command.js");
    const { packageRoot } = await import("../../../src/install/package-root.js");
    expect(detectLaunch()).toEqual({ command: "node", args: [join(packageRoot(), "dist", "cli.js")], how: "clone" });
    expect(detectLaunch("/home/u/.npm/_npx/1f2e3d/node_modules/opencode-conductor")).toEqual({
      command: "npx",
      args: ["-y", "opencode-conductor"],
      how: "npx",
    });
  });
});

describe("--env", () => {
  it("puts the variables into the entry, as each client spells it", async () => {
    const s = sandbox();
    const env = { OPENCODE_URL: "http://127.0.0.1:4096", OPENCODE_PASSWORD: 'p"w' };
    await install({ ...s.opts("codex", "user"), env });
    expect(parseToml(readFileSync(join(s.places.home, ".codex", "config.toml"), "utf8"))).toMatchObject({ mcp_servers: { opencode: { env } } });
    await install({ ...s.opts("opencode", "project"), env });
    expect(JSON.parse(readFileSync(join(s.places.project, "opencode.json"), "utf8")).mcp.conductor.environment).toEqual(env);
    await install({ ...s.opts("claude", "user"), env });
    expect(JSON.parse(readFileSync(join(s.places.home, ".claude.json"), "utf8")).mcpServers.opencode.env).toEqual(env);
  });

  it("a dry run does not show a secret given with --env", async () => {
    const s = sandbox();
    const env = { OPENCODE_URL: "http://127.0.0.1:4096", OPENCODE_PASSWORD: "hunter2-secret" };
    for (const client of ["codex", "gemini"] as const) {
      const report = await install({ ...s.opts(client, "user"), env, dryRun: true });
      expect(report).not.toContain("hunter2-secret");
      expect(report).toContain("http://127.0.0.1:4096");
    }
  });
});
