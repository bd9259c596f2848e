// What an install must never do to a user's files: loosen a mode or leave a secret readable by
// others, break a symlink, write half a change, leave our entry behind when a marker was deleted,
// or show in --dry-run something other than what it writes. Temp HOMEs only.
import { spawn } from "node:child_process";
import { once } from "node:events";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseToml } from "smol-toml";
import { afterEach, describe, expect, it } from "vitest";
import { install, uninstall } from "../../../src/install/install.js";
import type { Launch } from "../../../src/install/launch-command.js";
import type { Client } from "../../../src/install/targets.js";

const launch: Launch = { command: "npx", args: ["-y", "opencode-conductor"], how: "npx" };
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function sandbox() {
  const root = mkdtempSync(join(tmpdir(), "occ-install-safety-"));
  roots.push(root);
  const places = { home: join(root, "home"), xdgConfig: join(root, "home", ".config", "opencode"), project: join(root, "project") };
  mkdirSync(places.home, { recursive: true });
  mkdirSync(places.project, { recursive: true });
  const stateDir = join(root, "state");
  const put = (path: string, text: string, mode?: number) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    if (mode !== undefined) chmodSync(path, mode);
  };
  return { root, places, stateDir, put, opts: (client: Client) => ({ client, launch, places, stateDir }) };
}

const modeOf = (path: string) => statSync(path).mode & 0o777;
const SECRET = { OPENCODE_URL: "http://127.0.0.1:4096", OPENCODE_PASSWORD: "hunter2-secret" };

describe("file modes", () => {
  it("a new config holding --env values is 0600; one without is as the umask makes it", async () => {
    const s = sandbox();
    await install({ ...s.opts("codex"), env: SECRET });
    expect(modeOf(join(s.places.home, ".codex", "config.toml"))).toBe(0o600);
    await install({ ...s.opts("gemini"), env: SECRET });
    expect(modeOf(join(s.places.home, ".gemini", "settings.json"))).toBe(0o600);
    await install(s.opts("cursor"));
    expect(modeOf(join(s.places.home, ".cursor", "mcp.json"))).toBe(0o666 & ~process.umask());
  });

  it("an existing file is never loosened, and loses group and other bits once it holds a secret", async () => {
    const s = sandbox();
    const toml = join(s.places.home, ".codex", "config.toml");
    s.put(toml, 'model = "o3"\n', 0o644);
    const report = await install({ ...s.opts("codex"), env: SECRET });
    expect(report).toContain("mode 0644 → 0600: it now holds --env values");
    expect(modeOf(toml)).toBe(0o600);
    await uninstall(s.opts("codex"));
    expect(readFileSync(toml, "utf8")).toBe('model = "o3"\n');
    expect(modeOf(toml)).toBe(0o600);

    const json = join(s.places.home, ".cursor", "mcp.json");
    s.put(json, "{}\n", 0o640);
    await install(s.opts("cursor"));
    expect(modeOf(json)).toBe(0o640);
    s.put(join(s.places.home, ".gemini", "settings.json"), "{}\n", 0o600);
    await install(s.opts("gemini"));
    expect(modeOf(join(s.places.home, ".gemini", "settings.json"))).toBe(0o600);
  });

  it("the install record, which holds the files' texts, is 0600", async () => {
    const s = sandbox();
    await install({ ...s.opts("codex"), env: SECRET });
    expect(modeOf(join(s.stateDir, "installs.json"))).toBe(0o600);
  });
});

describe("a change is whole or not at all", () => {
  it("an edit whose result would not parse is refused, and the file is left as it was", async () => {
    const s = sandbox();
    const toml = join(s.places.home, ".codex", "config.toml");
    const inline = 'mcp_servers = { other = { command = "x" } }\n';
    s.put(toml, inline);
    await expect(install(s.opts("codex"))).rejects.toThrow(/would not be valid TOML .*write it as \[mcp_servers\.NAME\] tables instead/);
    expect(readFileSync(toml, "utf8")).toBe(inline);
    expect(readdirSync(dirname(toml))).toEqual(["config.toml"]); // no temp file left
    expect(existsSync(join(s.stateDir, "installs.json"))).toBe(false);
  });

  it("a config that is not valid is refused with where it is wrong", async () => {
    const s = sandbox();
    s.put(join(s.places.home, ".codex", "config.toml"), "[mcp_servers.other]\ncommand = \n");
    await expect(install(s.opts("codex"))).rejects.toThrow(/config\.toml is not valid TOML \(.*\): fix it, then run this again/);
    s.put(join(s.places.home, ".gemini", "settings.json"), '{\n  "a": 1\n  "b": 2\n}\n');
    await expect(install(s.opts("gemini"))).rejects.toThrow(/settings\.json is not valid JSON \(line 3: CommaExpected\)/);
    s.put(join(s.places.home, ".cursor", "mcp.json"), "[1, 2]\n");
    await expect(install(s.opts("cursor"))).rejects.toThrow(/holds a JSON array, not an object/);
  });

  it("a write that fails puts back the files already written and the record", async () => {
    const s = sandbox();
    const config = join(s.places.home, ".claude.json");
    s.put(config, '{ "numStartups": 3 }\n');
    s.put(join(s.places.home, ".claude", "skills"), "a file where the skill's folder goes\n");
    await expect(install(s.opts("claude"))).rejects.toThrow(/cannot write .*SKILL\.md .*: nothing was changed/);
    expect(readFileSync(config, "utf8")).toBe('{ "numStartups": 3 }\n');
    expect(existsSync(join(s.stateDir, "installs.json"))).toBe(false);
    expect(readdirSync(s.places.home).sort()).toEqual([".claude", ".claude.json"]);
  });

  it("a config behind a symlink: the link stays, the file it points to gets the entry", async () => {
    const s = sandbox();
    const real = join(s.root, "dotfiles", "settings.json");
    s.put(real, '{ "theme": "dark" }\n');
    mkdirSync(join(s.places.home, ".gemini"), { recursive: true });
    const link = join(s.places.home, ".gemini", "settings.json");
    symlinkSync(real, link);
    await install(s.opts("gemini"));
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(real);
    expect(JSON.parse(readFileSync(real, "utf8"))).toMatchObject({ theme: "dark", mcpServers: { opencode: { command: "npx" } } });
    await uninstall(s.opts("gemini"));
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, "utf8")).toBe('{ "theme": "dark" }\n');
  });
});

describe("JSON keeps the file's own style", () => {
  it("tabs, a one-line file, and trailing commas are written as the file writes them", async () => {
    const s = sandbox();
    const tabs = join(s.places.home, ".cursor", "mcp.json");
    s.put(tabs, '{\n\t"mcpServers": {\n\t\t"other": {\n\t\t\t"command": "x"\n\t\t}\n\t}\n}\n');
    await install(s.opts("cursor"));
    expect(readFileSync(tabs, "utf8")).toMatch(/\n\t\t\},\n\t\t"opencode": \{\n\t\t\t"command": "npx",\n\t\t\t"args": \[\n\t\t\t\t"-y",/);

    const oneLine = join(s.places.home, ".claude.json");
    s.put(oneLine, '{"numStartups":3,"mcpServers":{"other":{"command":"x"}},"tips":[1,2]}');
    await install(s.opts("claude"));
    const text = readFileSync(oneLine, "utf8");
    expect(text.split("\n")).toHaveLength(1);
    expect(text).toContain('{"numStartups":3,"mcpServers":{"other":{"command":"x"},"opencode":{"type":"stdio","command":"npx"');
    await uninstall(s.opts("claude"));
    expect(readFileSync(oneLine, "utf8")).toBe('{"numStartups":3,"mcpServers":{"other":{"command":"x"}},"tips":[1,2]}');

    const trailing = join(s.places.xdgConfig, "opencode.json");
    s.put(trailing, '{\n  "mcp": {\n    "other": { "type": "local", "command": ["x"] }, // mine\n  },\n}\n');
    await install(s.opts("opencode"));
    expect(readFileSync(trailing, "utf8")).toMatch(
      /^\{\n {2}"mcp": \{\n {4}"other": \{ "type": "local", "command": \["x"\] \}, \/\/ mine\n {4}"conductor": \{\n[\s\S]*\n {4}\},\n {2}\},\n\}\n$/,
    );
  });
});

describe("uninstall finds our entry however it was left", () => {
  it("the TOML block's closing marker deleted: the entry and our lines go, the user's lines stay", async () => {
    for (const withRecord of [true, false]) {
      const s = sandbox();
      const toml = join(s.places.home, ".codex", "config.toml");
      s.put(toml, 'model = "o3"\n');
      await install({ ...s.opts("codex"), env: SECRET });
      const text = readFileSync(toml, "utf8");
      writeFileSync(toml, `${text.replace("# <<< opencode-conductor\n", "")}\n[profiles.fast]\nmodel = "o4-mini"\n`);
      if (!withRecord) rmSync(join(s.stateDir, "installs.json"));
      expect(await uninstall(s.opts("codex"))).toMatchObject({ complete: true });
      const left = readFileSync(toml, "utf8");
      expect(left).not.toContain("opencode-conductor");
      expect(parseToml(left)).toEqual({ model: "o3", profiles: { fast: { model: "o4-mini" } } });
    }
  });

  it("the Markdown block's end marker deleted: our text is found by itself; changed, it is reported and the exit code says so", async () => {
    const s = sandbox();
    const agents = join(s.places.home, ".codex", "AGENTS.md");
    s.put(agents, "# My rules\n");
    await install(s.opts("codex"));
    writeFileSync(agents, readFileSync(agents, "utf8").replace("<!-- <<< opencode-conductor -->\n", ""));
    expect(await uninstall(s.opts("codex"))).toMatchObject({ complete: true });
    expect(readFileSync(agents, "utf8")).toBe("# My rules\n");

    await install(s.opts("codex"));
    writeFileSync(agents, readFileSync(agents, "utf8").replace("<!-- <<< opencode-conductor -->\n", "").replace("You can hand work", "I edited this"));
    const undone = await uninstall(s.opts("codex"));
    expect(undone.complete).toBe(false);
    expect(undone.report).toMatch(/left: .*AGENTS\.md: our block starts at line 3 but its end marker .* is gone/);
    // What was left stays in the record for the next try.
    expect(JSON.parse(readFileSync(join(s.stateDir, "installs.json"), "utf8")).installs[0].files.map((f: { path: string }) => f.path)).toEqual([agents]);
  });

  it("an entry of the same name that is not ours is left alone", async () => {
    const s = sandbox();
    const settings = join(s.places.home, ".gemini", "settings.json");
    s.put(settings, '{ "mcpServers": { "opencode": { "command": "my-own-server" } } }\n');
    const undone = await uninstall(s.opts("gemini"));
    expect(undone.report).toMatch(/not installed .*nothing to undo/);
    expect(undone.report).toContain('has an entry "mcpServers" › "opencode" that does not start opencode-conductor: left as is');
    expect(readFileSync(settings, "utf8")).toBe('{ "mcpServers": { "opencode": { "command": "my-own-server" } } }\n');
  });
});

describe("--dry-run", () => {
  it.each(["claude", "codex", "gemini", "cursor", "opencode"] as const)("%s: the lines it shows are the lines the install writes", async (client) => {
    const s = sandbox();
    const config = {
      claude: [join(s.places.home, ".claude.json"), '{\n  "numStartups": 3\n}\n'],
      codex: [join(s.places.home, ".codex", "config.toml"), 'model = "o3"\n'],
      gemini: [join(s.places.home, ".gemini", "settings.json"), '// mine\n{\n  "theme": "dark"\n}\n'],
      cursor: [join(s.places.home, ".cursor", "mcp.json"), '{\n  "mcpServers": {}\n}\n'],
      opencode: [join(s.places.xdgConfig, "opencode.json"), '{\n  "$schema": "https://opencode.ai/config.json"\n}\n'],
    }[client] as [string, string];
    s.put(...config);
    const env = { OPENCODE_URL: "http://127.0.0.1:4096" };
    const shown = await install({ ...s.opts(client), env, dryRun: true });
    expect(readFileSync(config[0], "utf8")).toBe(config[1]);
    const section = shown.split(`--- ${config[0]}\n`)[1]!.split("\n\n--- ")[0]!;
    const added = section
      .split("\n")
      .filter((l) => l.startsWith("+ ") || l === "+")
      .map((l) => l.slice(2));
    const removed = section
      .split("\n")
      .filter((l) => l.startsWith("- "))
      .map((l) => l.slice(2));
    await install({ ...s.opts(client), env });
    const written = readFileSync(config[0], "utf8").split("\n");
    const before = config[1].split("\n");
    // The file is the one before with exactly the shown lines added, where the preview put them.
    // At most the line the entry goes after (it gains a comma), or the `{}` it goes into.
    expect(removed.length).toBeLessThanOrEqual(1);
    for (const line of removed) expect(before).toContain(line);
    expect(written.length).toBe(before.length - removed.length + added.length);
    const at = written.indexOf(added[0]!);
    expect(written.slice(at, at + added.length)).toEqual(added);
  });

  it("shows a secret given with --env as ***, and writes it", async () => {
    const s = sandbox();
    const shown = await install({ ...s.opts("gemini"), env: SECRET, dryRun: true });
    expect(shown).not.toContain("hunter2-secret");
    expect(shown).toContain('+         "OPENCODE_PASSWORD": "***"');
    await install({ ...s.opts("gemini"), env: SECRET });
    expect(readFileSync(join(s.places.home, ".gemini", "settings.json"), "utf8")).toContain('"OPENCODE_PASSWORD": "hunter2-secret"');
  });
});

describe("the install command", () => {
  const CLI = fileURLToPath(new URL("../../../dist/cli.js", import.meta.url));
  async function run(args: string[], home: string, stateDir: string) {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: home, XDG_CONFIG_HOME: join(home, ".config"), OPENCODE_CONDUCTOR_STATE_DIR: stateDir },
      cwd: home,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const [code] = (await once(child, "exit")) as [number | null];
    return { code, stdout, stderr };
  }

  it("exits 2 on a refused install with the reason, and 1 when uninstall leaves something of ours", async () => {
    const s = sandbox();
    s.put(join(s.places.home, ".codex", "config.toml"), '[mcp_servers.opencode]\ncommand = "mine"\n');
    const refused = await run(["install", "--client", "codex"], s.places.home, s.stateDir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /^opencode-conductor install: .*config\.toml already has an entry \[mcp_servers\.opencode\] that does not start opencode-conductor/,
    );
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect((await run(["install", "--client", "codex", "--force"], s.places.home, s.stateDir)).code).toBe(0);
    const agents = join(s.places.home, ".codex", "AGENTS.md");
    writeFileSync(agents, readFileSync(agents, "utf8").replace("<!-- <<< opencode-conductor -->", "").replace("You can hand work", "Edited"));
    const partial = await run(["uninstall", "--client", "codex"], s.places.home, s.stateDir);
    expect(partial.code).toBe(1);
    expect(partial.stdout).toContain("left: ");
    expect(readFileSync(join(s.places.home, ".codex", "config.toml"), "utf8")).toBe('[mcp_servers.opencode]\ncommand = "mine"\n');
  });
});
