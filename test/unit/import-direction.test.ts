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
