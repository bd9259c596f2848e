// The running product never imports codegen: the OpenAPI reader it uses on a connected server's
// document lives in src/openapi/, and codegen imports it from there (issue 25, item 6).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const IMPORT = /(?:from|import)\s*\(?\s*"([^"]+)"/g;

/** Every relative import (and re-export) of the files under `dir`, as `from → to`, paths from the repository root. */
function importEdges(dir: string): Array<{ from: string; to: string }> {
  return sourceFiles(dir).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(IMPORT)]
      .filter((m) => m[1]!.startsWith("."))
      .map((m) => ({ from: file, to: normalize(join(dirname(file), m[1]!)).replace(/\.js$/, ".ts") })),
  );
}

describe("import direction", () => {
  it("no file in src/ imports from codegen/", () => {
    const wrong = sourceFiles("src").flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(IMPORT)].filter((m) => /(^|\/)codegen\//.test(m[1]!)).map((m) => `${file} → ${m[1]}`),
    );
    expect(wrong).toEqual([]);
  });

  it("codegen reads OpenAPI documents with the reader in src/openapi/", () => {
    const users = sourceFiles("codegen").filter((file) => readFileSync(file, "utf8").includes("src/openapi/"));
    expect(users.length).toBeGreaterThan(0);
  });

  it("the contract tests and the test support read OpenAPI documents from src/openapi/, not from codegen/", () => {
    const wrong = [...importEdges("test/unit/contract"), ...importEdges("test/support")].filter((e) => e.to.startsWith("codegen/"));
    expect(wrong).toEqual([]);
  });
});

// Each opencode major is wholly behind src/core/engine/ (issue 25, item 2): nothing else in the
// core tells the majors apart (src/core/instances/ asks engine/binary.ts what its binary needs).
describe("engine boundary", () => {
  const outsideEngine = sourceFiles("src/core").filter((file) => !file.startsWith(join("src", "core", "engine") + "/"));
  const MAJOR_TEST = /\bmajor\s*[!=]==|[!=]==\s*[\w.?]*\bmajor\b/;

  it("no file in src/core outside engine/ tests a major (`major ===` / `major !==`)", () => {
    const tests = outsideEngine.flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (MAJOR_TEST.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(outsideEngine.length).toBeGreaterThan(50);
    expect(tests).toEqual([]);
  });

  it("the major test is seen where it is: binary.ts picks a major", () => {
    expect(MAJOR_TEST.test(readFileSync("src/core/engine/binary.ts", "utf8"))).toBe(true);
  });

  // Other ways to tell the majors apart: the engine's kind, the engine's class, a version string.
  const KIND_TEST = /\.kind\s*[!=]==\s*"v[12]"|"v[12]"\s*[!=]==|instanceof\s+V[12]Engine|version\)?\.startsWith\(\s*"[12]/;

  it("no file in src/core outside engine/ tests the engine's kind, class or version", () => {
    const tests = outsideEngine.flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (KIND_TEST.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(tests).toEqual([]);
  });
});

// The arrows of the core's import graph (docs/architecture.md, "Layers"; madge draws the same graph:
// `npx madge --extensions ts --ts-config tsconfig.json --json src`).
describe("core import graph", () => {
  const edges = importEdges("src");
  const engine = join("src", "core", "engine") + "/";
  const inCore = (path: string) => path.startsWith(join("src", "core") + "/");

  it("has the edges it is about (the parser reads the imports)", () => {
    expect(edges.length).toBeGreaterThan(1000);
    expect(edges.some((e) => e.from.startsWith(engine) && e.to.startsWith("src/core/model/"))).toBe(true);
  });

  it("core/engine/ imports nothing of core/turns/", () => {
    expect(edges.filter((e) => e.from.startsWith(engine) && e.to.startsWith("src/core/turns/"))).toEqual([]);
  });

  it("no file of the core outside engine/ imports generated/ or opencode's schema types (client/types.ts)", () => {
    const wrong = edges.filter((e) => inCore(e.from) && !e.from.startsWith(engine) && (e.to.startsWith("generated/") || e.to === "src/client/types.ts"));
    expect(wrong).toEqual([]);
  });

  it("nothing outside core/engine/ imports one major's folder (engine/v1/, engine/v2/): it asks the Engine interface", () => {
    const wrong = edges.filter((e) => !e.from.startsWith(engine) && /^src\/core\/engine\/v[12]\//.test(e.to));
    expect(wrong).toEqual([]);
  });
});
