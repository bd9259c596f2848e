// Holds a table of event kinds and `data` fields (src/core/engine/v2/v2-event-reads.ts) to the
// event schemas an OpenAPI document declares for `GET /api/event`: each kind is a member of the
// event union, each field a property of its `data` with the JSON type the reader expects.
import type { JsonType } from "../../../src/core/engine/v2/v2-event-reads.js";
import type { OpenApiDocument } from "../../../src/openapi/spec.js";

type Schema = Record<string, unknown>;

/** Each event kind's `data` schema, or undefined when the document types event data as opaque JSON. */
export function eventDataSchemas(doc: OpenApiDocument): Map<string, Schema> | undefined {
  const resolve = (s: unknown): Schema => {
    let out = (s ?? {}) as Schema;
    for (let i = 0; i < 10 && typeof out.$ref === "string"; i++) out = (doc.components?.schemas?.[(out.$ref as string).split("/").pop()!] ?? {}) as Schema;
    return out;
  };
  const subscribe = Object.values(doc.paths).find(
    (item) => (item as Schema).get && ((item as Schema).get as Schema).operationId?.toString().endsWith("event.subscribe"),
  );
  const media = ((((subscribe as Schema).get as Schema).responses as Schema)["200"] as Schema).content as Schema;
  const frame = resolve((media["text/event-stream"] as Schema).schema);
  // Event data is a JSON string; its schema, when the document gives one, is the `contentSchema`.
  const encoded = resolve((frame.properties as Schema).data);
  const data = encoded.contentSchema ? resolve(encoded.contentSchema) : encoded;
  const members = (data.anyOf ?? data.oneOf) as unknown[] | undefined;
  if (!members) return undefined;
  const out = new Map<string, Schema>();
  for (const member of members.map(resolve)) {
    const kind = (resolve((member.properties as Schema | undefined)?.type).enum as string[] | undefined)?.[0];
    if (kind) out.set(kind, resolveDeep(resolve((member.properties as Schema).data), resolve));
  }
  return out;
}

function resolveDeep(schema: Schema, resolve: (s: unknown) => Schema): Schema {
  const properties = Object.fromEntries(Object.entries((schema.properties ?? {}) as Schema).map(([k, v]) => [k, resolve(v)]));
  return { ...schema, properties, resolve };
}

/** JSON types a property schema allows (through anyOf/oneOf/allOf and $ref). */
function typesOf(schema: Schema, resolve: (s: unknown) => Schema, depth = 0): Set<string> {
  const out = new Set<string>();
  const s = resolve(schema);
  if (typeof s.type === "string") out.add(s.type === "integer" ? "number" : s.type);
  if (Array.isArray(s.type)) for (const t of s.type as string[]) out.add(t === "integer" ? "number" : t);
  if (s.properties && !s.type) out.add("object");
  if (depth < 5)
    for (const key of ["anyOf", "oneOf", "allOf"])
      for (const sub of (s[key] as unknown[] | undefined) ?? []) for (const t of typesOf(sub as Schema, resolve, depth + 1)) out.add(t);
  return out;
}

/** One line per difference, naming the kind and the field. */
export function checkEventReads(schemas: Map<string, Schema>, reads: Record<string, Record<string, JsonType>>, ifPresent = false): string[] {
  const out: string[] = [];
  for (const [kind, fields] of Object.entries(reads)) {
    const data = schemas.get(kind);
    if (!data) {
      out.push(`${kind}: no such event kind`);
      continue;
    }
    const resolve = data.resolve as (s: unknown) => Schema;
    for (const [field, type] of Object.entries(fields)) {
      const property = (data.properties as Record<string, Schema>)[field];
      if (!property) {
        if (!ifPresent) out.push(`${kind}: data.${field} is not in its schema`);
      } else if (type !== "any" && !typesOf(property, resolve).has(type))
        out.push(`${kind}: data.${field} is ${[...typesOf(property, resolve)].join(" | ") || "untyped"}, not ${type}`);
    }
  }
  return out;
}
