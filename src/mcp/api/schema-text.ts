// Rendering JSON Schemas compactly, for answers and validation errors of oc_api and oc_api_ops.
import type { JsonSchema } from "../../../generated/operations.js";

function resolveRef(root: JsonSchema, ref: string): JsonSchema | undefined {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const key of ref.slice(2).split("/")) {
    node = node && typeof node === "object" ? (node as Record<string, unknown>)[key.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
  }
  return node && typeof node === "object" ? (node as JsonSchema) : undefined;
}

/** Follows a `$ref` (one level) to the schema it names. */
export function deref(schema: JsonSchema, root: JsonSchema): JsonSchema {
  return typeof schema.$ref === "string" ? (resolveRef(root, schema.$ref) ?? schema) : schema;
}

export const refName = (schema: JsonSchema): string | undefined => (typeof schema.$ref === "string" ? schema.$ref.split("/").pop() : undefined);

/**
 * A one-line rendering: `{ parts*: (TextPartInput | FilePartInput)[], agent: string }`. Depth 0 lists
 * properties with their types, depth 1 only their names; `*` marks required ones.
 */
export function shapeOf(schema: JsonSchema | null | undefined, root: JsonSchema | null | undefined = schema, depth = 0): string {
  if (!schema || !root) return "any";
  const s = schema as Record<string, unknown>;
  const name = refName(schema);
  if (name) return depth === 0 ? shapeOf(deref(schema, root), root, 0) : name;
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (Array.isArray(s.enum))
    return s.enum.length > 8
      ? `${s.enum
          .slice(0, 8)
          .map((v) => JSON.stringify(v))
          .join("|")}|…`
      : s.enum.map((v) => JSON.stringify(v)).join("|");
  const alts = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(alts)) return alts.map((a) => shapeOf(a, root, depth + 1)).join(" | ");
  if (Array.isArray(s.type)) return s.type.join("|");
  if (s.type === "array") {
    const item = s.items ? shapeOf(s.items as JsonSchema, root, depth + 1) : "any";
    return /[ |]/.test(item) ? `(${item})[]` : `${item}[]`;
  }
  if (s.type === "object" || s.properties) {
    const props = (s.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((s.required ?? []) as string[]);
    const keys = Object.keys(props);
    if (keys.length === 0) {
      const extra = s.additionalProperties;
      return extra && typeof extra === "object" ? `{ [key]: ${shapeOf(extra as JsonSchema, root, depth + 1)} }` : "object";
    }
    if (depth >= 2) return "{…}";
    const shown = keys.map((k) => {
      const label = `${k}${required.has(k) ? "*" : ""}`;
      if (depth > 0) return label;
      const type = shapeOf(props[k], root, 1);
      return `${label}: ${type.length > 120 ? `${type.slice(0, 119)}…` : type}`;
    });
    return `{ ${shown.join(", ")} }`;
  }
  if (s.type === "string") return typeof s.format === "string" ? `string(${s.format})` : typeof s.pattern === "string" ? `string(${s.pattern})` : "string";
  return typeof s.type === "string" ? s.type : "any";
}
