// Claims the docs make that a machine can check, checked: every `npm run` script they name exists,
// every environment variable they name is read or set somewhere in the code, every repository
// path they name exists, every `opencode-conductor <command>` they name is one the CLI has, the
// project list and file counts of docs/testing.md are current, and the figures of its spot-check
// list hold. The figures a test measures elsewhere are listed there with the test that does.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { operations, specInfo } from "../../generated/operations.js";
import { currentDoc, projectFiles } from "../../scripts/testing-doc.js";
import { allListedTools } from "../support/toolsnaps.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const DOCS = [
  "README.md",
  "CONTRIBUTING.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
// docs/tools.md is generated from the tool definitions (npm run docs:check keeps it current).
const CHECKED = DOCS.filter((d) => d !== "docs/tools.md");
const text = Object.fromEntries(CHECKED.map((d) => [d, read(d)]));

/** Every match of `re` (its first group) in the checked docs, with where it was found. */
function claims(re: RegExp): Array<{ doc: string; claim: string }> {
  return CHECKED.flatMap((doc) => [...text[doc]!.matchAll(re)].map((m) => ({ doc, claim: m[1]! })));
}

/** The code and config a variable must appear in to be real: what reads or sets it. */
const CODE = (() => {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${name.name}`;
      if (name.isDirectory()) {
        if (!["fixtures", "node_modules", "__toolsnaps__"].includes(name.name)) walk(path);
      } else if (/\.(ts|mjs|js|sh|json|yml|yaml)$/.test(name.name)) files.push(path);
    }
  };
  for (const dir of ["src", "test", "scripts", "codegen", "bench", "deploy", "examples", ".ci"]) if (existsSync(join(ROOT, dir))) walk(dir);
  return files.map((f) => read(f)).join("\n") + read(".ci/run");
})();

describe("the docs' claims", () => {
  it("name only npm scripts that exist", () => {
    const scripts = Object.keys((JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts);
    const named = claims(/npm run ([\w:-]+)/g);
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((c) => !scripts.includes(c.claim))).toEqual([]);
  });

  it("name only environment variables the code reads or sets", () => {
    const named = claims(/\b((?:OPENCODE|OCC)_[A-Z0-9_]*[A-Z0-9])\b/g).filter((c) => !/^OPENCODE_CONDUCTOR_$/.test(c.claim));
    expect(named.length).toBeGreaterThan(30);
    expect(named.filter((c) => !new RegExp(`\\b${c.claim}\\b`).test(CODE))).toEqual([]);
  });

  it("name only repository paths that exist", () => {
    const named = claims(/`((?:src|test|docs|scripts|codegen|bench|spec|generated|examples|deploy|skills|\.ci|\.claude-plugin)\/[\w./-]*[\w/])`/g).filter(
      (c) => !/[*<>]|\.\.\.|…/.test(c.claim),
    );
    expect(named.length).toBeGreaterThan(50);
    expect(named.filter((c) => !existsSync(join(ROOT, c.claim)))).toEqual([]);
  });

  it("name only opencode-conductor commands the CLI has", () => {
    const commands = ["install", "uninstall", "console", "worker", "queue", "audit", "run-workflow"];
    const named = claims(/`(?:opencode-conductor|node (?:\/path\/to\/opencode-conductor\/)?dist\/cli\.js) ([a-z][\w-]*)/g);
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((c) => !commands.includes(c.claim))).toEqual([]);
    const cli = read("src/cli.ts");
    for (const command of commands) expect(cli, `src/cli.ts dispatches "${command}"`).toContain(`"${command}"`);
  });

  it("docs/testing.md lists every vitest project, with current file counts (else npm run docs:testing)", () => {
    const projects = projectFiles();
    expect(projects).toHaveLength(7);
    expect(currentDoc() === read("docs/testing.md"), "docs/testing.md's project block is stale: run npm run docs:testing").toBe(true);
    const table = [...read("docs/testing.md").matchAll(/^\| `([\w-]+)` \| `(?:npm|npx)/gm)].map((m) => m[1]);
    expect(table.sort()).toEqual(projects.map((p) => p.name).sort());
    expect(read("README.md")).toContain("runs seven vitest projects");
  });

  it("figures of the spot-check list: operations of the pinned spec, tools, the pin", async () => {
    expect(Object.keys(operations)).toHaveLength(188);
    expect(read("README.md")).toContain("every one of the 188 operations of opencode 1.18.33");
    expect(specInfo.opencodeVersion).toBe("1.18.33");
    expect(await allListedTools()).toHaveLength(19);
    const pkg = JSON.parse(read("package.json")) as { version: string };
    expect(read("docs/quickstart.md")).toContain(`opencode-conductor-${pkg.version}.tgz`);
    expect(read("README.md")).toContain(`opencode-conductor-${pkg.version}.tgz`);
  });
});
