// The running product never imports codegen: the OpenAPI reader it uses on a connected server's
// document lives in src/openapi/, and codegen imports it from there (issue 25, item 6).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const IMPORT = /(?:from|import)\s*\(?\s*"([^"]+)"/g;

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
});
