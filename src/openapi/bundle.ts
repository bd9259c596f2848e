// Makes a schema from the spec standalone, so Ajv2020 compiles it with nothing else loaded.
import type { JsonSchema, OpenApiDocument } from "./document.js";

const SCHEMA_REF = /^#\/components\/schemas\/([^/]+)(.*)$/;

/**
 * A copy of `schema` that stands alone: each `#/components/schemas/X` it needs (transitively)
 * becomes `#/$defs/X`, with X copied into `$defs` (sorted by name).
 */
export function bundleSchema(spec: OpenApiDocument, schema: JsonSchema): JsonSchema {
  const components = (spec.components?.schemas ?? {}) as Record<string, JsonSchema>;
  const defs = new Map<string, unknown>();
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isObject(node)) return node;
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      copy[key] = key === "$ref" && typeof value === "string" ? rewriteRef(value) : visit(value);
    }
    return copy;
  };
  const rewriteRef = (ref: string): string => {
    const match = SCHEMA_REF.exec(ref);
    if (!match) {
      if (ref.startsWith("#/$defs/")) return ref; // the schema's own $defs (opencode specs have none)
      throw new Error(`cannot bundle $ref ${ref}: only #/components/schemas/* is supported`);
    }
    const segment = match[1]!;
    const name = unescapePointer(segment);
    if (!defs.has(name)) {
      const target = components[name];
      if (!isObject(target)) throw new Error(`$ref ${ref} points at a missing schema`);
      defs.set(name, null); // placeholder first: schemas may refer to themselves
      defs.set(name, visit(target));
    }
    return `#/$defs/${segment}${match[2]}`;
  };
  const root = visit(schema) as JsonSchema;
  if (defs.size === 0) return root;
  const own = isObject(root.$defs) ? root.$defs : {};
  const merged: Record<string, unknown> = { ...own };
  for (const name of [...defs.keys()].sort(byName)) {
    if (name in own) throw new Error(`$defs/${name} already exists in the schema being bundled`);
    merged[name] = defs.get(name);
  }
  return { ...root, $defs: merged };
}

export function unescapePointer(segment: string): string {
  return decodeURIComponent(segment).replace(/~1/g, "/").replace(/~0/g, "~");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Code-unit order, independent of locale.
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
