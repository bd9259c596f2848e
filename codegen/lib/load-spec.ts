// Reads an OpenAPI document from disk for codegen, spec:diff and the tests (the reader itself is
// src/openapi/spec.ts, which the running server uses on documents it fetched).
import { readFileSync } from "node:fs";
import type { OpenApiDocument } from "../../src/openapi/document.js";

export function loadSpec(file: string): OpenApiDocument {
  const spec = JSON.parse(readFileSync(file, "utf8")) as OpenApiDocument;
  if (!spec || typeof spec !== "object" || typeof spec.paths !== "object") {
    throw new Error(`${file} is not an OpenAPI document (no "paths")`);
  }
  return spec;
}
