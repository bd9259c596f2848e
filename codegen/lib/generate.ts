// Everything `npm run codegen` produces, as file name → content, plus writing it to a folder.
// Output depends only on the spec bytes (and meta.json's opencode version): no dates, sorted ids.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { readMetaNextTo, sha256 } from "./meta.js";
import { operationRow, renderOperationsFile, type SpecInfo } from "./operations-file.js";
import { renderReadme } from "./readme-file.js";
import { listOperations, type OpenApiDocument } from "../../src/openapi/spec.js";
import { renderTypesFile } from "./types-file.js";

export const GENERATED_FILES = ["README.md", "openapi.d.ts", "operations.ts"] as const;

export async function generateFiles(specFile: string): Promise<Map<string, string>> {
  const bytes = readFileSync(specFile);
  const spec = JSON.parse(bytes.toString("utf8")) as OpenApiDocument;
  const operations = listOperations(spec);
  const info: SpecInfo = {
    title: spec.info.title,
    version: spec.info.version,
    opencodeVersion: readMetaNextTo(specFile)?.opencodeVersion ?? spec.info.version,
    sha256: sha256(bytes),
    operationCount: operations.length,
  };
  const rows = operations.map((op) => operationRow(spec, op));
  return new Map([
    ["README.md", renderReadme()],
    ["openapi.d.ts", await renderTypesFile(specFile)],
    // Only the file's base name goes in the header: output must not depend on where it lives.
    ["operations.ts", renderOperationsFile(rows, info, basename(specFile))],
  ]);
}

export async function writeGenerated(specFile: string, outDir: string): Promise<string[]> {
  const files = await generateFiles(specFile);
  mkdirSync(outDir, { recursive: true });
  for (const [name, content] of files) writeFileSync(join(outDir, name), content);
  return [...files.keys()];
}
