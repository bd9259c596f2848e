// The install matrix: every client and scope × what a user's config may already be (none, with
// comments, holding an entry of ours, holding a different entry of the same name, with numbers
// beyond JavaScript's precision, with CRLF line ends). Each time: the result is a valid config of
// its kind holding our entry, everything of the user's is still there byte for byte, and
// uninstall gives back the file as it was, with the install record or (our entry only) without it.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseTree, type ParseError } from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { afterEach, describe, expect, it } from "vitest";
import { valueAt, withoutKey } from "../../../src/install/entry-tree.js";
import { install, uninstall } from "../../../src/install/install.js";
import type { Launch } from "../../../src/install/launch-command.js";
import { targetFor, type Client, type Scope } from "../../../src/install/targets.js";
import { readJsonDoc } from "../../../src/install/json-entry.js";

const launch: Launch = { command: "npx", args: ["-y", "opencode-conductor"], how: "npx" };
/** An earlier install of ours, from another place. */
const olderLaunch: Launch = { command: "node", args: ["/opt/opencode-conductor/dist/cli.js"], how: "clone" };

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function sandbox() {
  const root = mkdtempSync(join(tmpdir(), "occ-install-matrix-"));
  roots.push(root);
  const places = { home: join(root, "home"), xdgConfig: join(root, "home", ".config", "opencode"), project: join(root, "project") };
  mkdirSync(places.home, { recursive: true });
  mkdirSync(places.project, { recursive: true });
  return { places, stateDir: join(root, "state") };
}

const CASES: Array<[Client, Scope]> = [
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

const SITUATIONS = ["no config", "commented config", "existing entry of ours", "conflicting entry", "big numbers", "CRLF"] as const;
type Situation = (typeof SITUATIONS)[number];

/** The user's file for a situation, and the strings of theirs that must survive the install untouched. */
function seed(kind: "json" | "toml", key: string[], situation: Situation, client: Client, scope: Scope, places: ReturnType<typeof sandbox>["places"]) {
  const [table, name] = key as [string, string];
  const ours = targetFor(client, scope, olderLaunch, places).edits[0]!;
  const oursValue = "value" in ours ? ours.value : {};
  const foreign = client === "opencode" ? { type: "local", command: ["my-own-server", "--port", "1"] } : { command: "my-own-server", args: ["--port", "1"] };
  if (kind === "json") {
    switch (situation) {
      case "no config":
        return { text: undefined, kept: [] };
      case "commented config":
        return {
          text: `// my settings\n{\n  /* look */ "theme": "dark",\n  "${table}": {\n    // another server\n    "other": { "command": "x" }, // keep me\n  },\n}\n`,
          kept: ["// my settings", '/* look */ "theme": "dark",', "// another server", '"other": { "command": "x" }, // keep me'],
        };
      case "existing entry of ours":
        return { text: `${JSON.stringify({ [table]: { [name]: oursValue } }, null, 2)}\n`, kept: [] };
      case "conflicting entry":
        return { text: `${JSON.stringify({ [table]: { [name]: foreign, other: { command: "x" } } }, null, 4)}\n`, kept: ['"other": {'] };
      case "big numbers":
        return {
          text: `{\n  "big": 12345678901234567890,\n  "exact": 0.30000000000000000000001,\n  "huge": 1e400,\n  "${table}": {}\n}\n`,
          kept: ['"big": 12345678901234567890,', '"exact": 0.30000000000000000000001,', '"huge": 1e400,'],
        };
      case "CRLF":
        return {
          text: `{\r\n  "theme": "dark",\r\n  "${table}": {\r\n    "other": {\r\n      "command": "x"\r\n    }\r\n  }\r\n}\r\n`,
          kept: ['"theme": "dark",\r\n'],
        };
    }
  }
  switch (situation) {
    case "no config":
      return { text: undefined, kept: [] };
    case "commented config":
      return {
        text: '# my codex config\nmodel = "o3" # the model\n\n[mcp_servers.other] # another server\ncommand = "x"\n# the end\n',
        kept: ["# my codex config\n", 'model = "o3" # the model\n', "[mcp_servers.other] # another server\n", "# the end\n"],
      };
    case "existing entry of ours":
      // As an earlier version wrote it: a marked block with an inline env table.
      return {
        text:
          'model = "o3"\n\n# >>> opencode-conductor (remove with: opencode-conductor uninstall)\n[mcp_servers.opencode]\ncommand = "node"\n' +
          'args = ["/opt/opencode-conductor/dist/cli.js"]\nenv = { OPENCODE_URL = "http://127.0.0.1:4096" }\ntool_timeout_sec = 900\n' +
          '# codex exec has nobody to ask: without this it refuses every call of these tools.\ndefault_tools_approval_mode = "approve"\n# <<< opencode-conductor\n',
        kept: ['model = "o3"\n'],
      };
    case "conflicting entry":
      return {
        text: '[mcp_servers.opencode]\ncommand = "my-own-server"\n\n[mcp_servers.opencode.env]\nX = "1"\n\n[profiles.fast]\nmodel = "o4-mini" # fast\n',
        kept: ['[profiles.fast]\nmodel = "o4-mini" # fast\n'],
      };
    case "big numbers":
      return {
        text: "max = 9223372036854775807\nmin = -9223372036854775808\npi = 3.14159265358979323846264338327950288\nwhen = 1979-05-27T07:32:00.999999-07:00\n",
        kept: [
          "max = 9223372036854775807\n",
          "min = -9223372036854775808\n",
          "pi = 3.14159265358979323846264338327950288\n",
          "when = 1979-05-27T07:32:00.999999-07:00\n",
        ],
      };
    case "CRLF":
      return { text: 'model = "o3"\r\n\r\n[mcp_servers.other]\r\ncommand = "x"\r\n', kept: ['model = "o3"\r\n', "[mcp_servers.other]\r\n"] };
  }
}

/** The file parsed as its client reads it: strict JSON where the user's file was, JSONC else, TOML. */
function parsed(kind: "json" | "toml", text: string, strict: boolean): Record<string, unknown> {
  if (kind === "toml") return JSON.parse(JSON.stringify(parseToml(text, { integersAsBigInt: "asNeeded" }), (_, v) => (typeof v === "bigint" ? `${v}n` : v)));
  if (strict) return JSON.parse(text) as Record<string, unknown>;
  const errors: ParseError[] = [];
  parseTree(text, errors, { allowTrailingComma: true });
  expect(errors).toEqual([]);
  return readJsonDoc("", text).tree;
}

describe.each(CASES)("install matrix: %s (%s scope)", (client, scope) => {
  it.each(SITUATIONS)("%s: a valid config with our entry and all of the user's; uninstall restores it", async (situation) => {
    const s = sandbox();
    const edit = targetFor(client, scope, launch, s.places).edits[0]!;
    if (edit.kind !== "json" && edit.kind !== "toml") throw new Error("the first edit is the config entry");
    const { path, key, kind } = edit;
    const user = seed(kind, key, situation, client, scope, s.places);
    if (user.text !== undefined) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, user.text);
    }
    const strict = kind === "json" && (user.text === undefined || !/\/[/*]|,\s*[}\]]|1e400/.test(user.text));
    const opts = { client, scope, launch, places: s.places, stateDir: s.stateDir };

    // An entry of the same name is never replaced silently, and the file stays as it was.
    if (situation === "existing entry of ours" || situation === "conflicting entry") {
      await expect(install(opts)).rejects.toThrow(
        situation === "existing entry of ours"
          ? /already has an opencode-conductor entry .* with other settings .*--force/
          : /does not start opencode-conductor: pass --force/,
      );
      expect(readFileSync(path, "utf8")).toBe(user.text);
    }
    await install({ ...opts, force: situation === "existing entry of ours" || situation === "conflicting entry" });

    const text = readFileSync(path, "utf8");
    const tree = parsed(kind, text, strict);
    expect(valueAt(tree, key)).toMatchObject(JSON.parse(JSON.stringify(edit.value)));
    for (const piece of user.kept) expect(text, piece).toContain(piece);
    if (user.text !== undefined) {
      const before = parsed(kind, user.text, strict);
      expect(withoutKey(tree, key)).toEqual(withoutKey(before, key));
    }
    if (situation === "CRLF") expect(text.replace(/\r\n/g, "")).not.toContain("\n");
    expect(await install(opts)).toMatch(/already installed/);

    // With the record: the very bytes from before (or no file).
    expect(await uninstall(opts)).toMatchObject({ complete: true });
    if (user.text === undefined) expect(existsSync(path)).toBe(false);
    else expect(readFileSync(path, "utf8")).toBe(user.text);

    // Without it (another state dir, or installs.json gone): our entry is found and taken out.
    await install({ ...opts, force: true });
    rmSync(join(s.stateDir, "installs.json"));
    const undone = await uninstall(opts);
    expect(undone.complete).toBe(true);
    expect(undone.report).toContain("no install record");
    const after = existsSync(path) ? readFileSync(path, "utf8") : undefined;
    const left = after === undefined ? {} : parsed(kind, after, strict);
    expect(valueAt(left, key)).toBeUndefined();
    if (situation === "existing entry of ours" || situation === "conflicting entry") return; // the entry it replaced is not known without the record
    if (user.text === undefined) return;
    expect(withoutKey(left, key)).toEqual(withoutKey(parsed(kind, user.text, strict), key));
    for (const piece of user.kept) expect(after, piece).toContain(piece);
  });

  it("a file the client changed since the install keeps the change and gets back the entry the install replaced", async () => {
    const s = sandbox();
    const edit = targetFor(client, scope, launch, s.places).edits[0]!;
    if (edit.kind !== "json" && edit.kind !== "toml") throw new Error("the first edit is the config entry");
    const user = seed(edit.kind, edit.key, "conflicting entry", client, scope, s.places);
    mkdirSync(dirname(edit.path), { recursive: true });
    writeFileSync(edit.path, user.text!);
    const opts = { client, scope, launch, places: s.places, stateDir: s.stateDir };
    await install({ ...opts, force: true });
    const later =
      edit.kind === "json" ? readFileSync(edit.path, "utf8").replace(/^\{/, '{\n  "addedLater": 1,') : `${readFileSync(edit.path, "utf8")}\n[later]\nx = 1\n`;
    writeFileSync(edit.path, later);
    const undone = await uninstall(opts);
    expect(undone.report).toMatch(/put back the entry from before the install in/);
    const text = readFileSync(edit.path, "utf8");
    const tree = parsed(edit.kind, text, false);
    const before = parsed(edit.kind, user.text!, false);
    expect(valueAt(tree, edit.key)).toEqual(valueAt(before, edit.key));
    expect(tree).toMatchObject(edit.kind === "json" ? { addedLater: 1 } : { later: { x: 1 } });
  });
});
