// Reads an OpenAPI document from disk (a vendored spec, a recorded one): codegen, spec:diff and the
// tests load documents with it; the running server reads the documents it fetched with spec.ts.
import { readFileSync } from "node:fs";
import type { OpenApiDocument } from "./document.js";

export function loadSpec(file: string): OpenApiDocument {
  const spec = JSON.parse(readFileSync(file, "utf8")) as OpenApiDocument;
  if (!spec || typeof spec !== "object" || typeof spec.paths !== "object") {
    throw new Error(`${file} is not an OpenAPI document (no "paths")`);
  }
  return spec;
}
