// What changed between two OpenAPI documents, operation by operation (matched by operationId).
// Only what a caller depends on counts: method, path, parameters, request body, response statuses
// and schemas. Texts (summary, description, tags) and extensions such as x-codeSamples do not.
// Schemas are compared after bundling, so a change in a referenced component shows up in every
// operation that uses it.
import { isDeepStrictEqual } from "node:util";
import {
  bundleSchema,
  compareStrings,
  listOperations,
  schemaSummary,
  type JsonSchema,
  type OpenApiDocument,
  type SpecMedia,
  type SpecOperation,
} from "../../src/openapi/spec.js";

export type Change =
  | { kind: "method"; from: string; to: string }
  | { kind: "path"; from: string; to: string }
  | { kind: "param-added"; in: string; name: string; required: boolean }
  | { kind: "param-removed"; in: string; name: string }
  | { kind: "param-required"; in: string; name: string; from: boolean; to: boolean }
  | ({ kind: "param-schema"; in: string; name: string } & SchemaChange)
  | { kind: "body-added"; required: boolean }
  | { kind: "body-removed" }
  | { kind: "body-required"; from: boolean; to: boolean }
  | { kind: "body-content-added" | "body-content-removed"; contentType: string }
  | ({ kind: "body-schema"; contentType: string } & SchemaChange)
  | { kind: "response-added" | "response-removed"; status: string }
  | { kind: "response-content-added" | "response-content-removed"; status: string; contentType: string }
  | ({ kind: "response-schema"; status: string; contentType: string } & SchemaChange);

/**
 * `from`/`to` are short names ("Session[]"); `components` the `$defs` entries that differ;
 * `properties` the top-level properties that differ, when both sides are object schemas.
 */
export interface SchemaChange {
  from: string;
  to: string;
  components: string[];
  properties?: PropertyChanges;
}

export interface PropertyChanges {
  added: string[];
  removed: string[];
  changed: string[];
  nowRequired: string[];
  nowOptional: string[];
}

export interface OperationRef {
  id: string;
  method: string;
  path: string;
}

export interface OperationChange extends OperationRef {
  /** True when what the operation accepts changed (method, path, parameters, body). */
  request: boolean;
  changes: Change[];
}

export interface SpecDiff {
  oldCount: number;
  newCount: number;
  added: OperationRef[];
  removed: OperationRef[];
  changed: OperationChange[];
}

export interface DiffOptions {
  /**
   * Match operations by their id without this prefix: opencode's pre-release 2.x (and the `v2.*`
   * operations of 1.x) call them `v2.session.create`, the released 2.0.x `session.create`.
   */
  ignorePrefix?: string;
}

export function diffSpecs(oldSpec: OpenApiDocument, newSpec: OpenApiDocument, options: DiffOptions = {}): SpecDiff {
  const { ignorePrefix } = options;
  const key = (id: string) => (ignorePrefix && id.startsWith(ignorePrefix) ? id.slice(ignorePrefix.length) : id);
  const before = new Map(listOperations(oldSpec).map((op) => [key(op.id), op]));
  const after = new Map(listOperations(newSpec).map((op) => [key(op.id), op]));
  const ref = (op: SpecOperation): OperationRef => ({ id: op.id, method: op.method, path: op.path });
  const diff: SpecDiff = { oldCount: before.size, newCount: after.size, added: [], removed: [], changed: [] };
  for (const [id, op] of after) if (!before.has(id)) diff.added.push(ref(op));
  for (const [id, op] of before) if (!after.has(id)) diff.removed.push(ref(op));
  for (const [id, next] of after) {
    const prev = before.get(id);
    if (!prev) continue;
    const changes = diffOperation({ spec: oldSpec, op: prev }, { spec: newSpec, op: next });
    if (changes.length > 0) diff.changed.push({ ...ref(next), request: changes.some(isRequestChange), changes });
  }
  return diff;
}

interface Side {
  spec: OpenApiDocument;
  op: SpecOperation;
}

function diffOperation(a: Side, b: Side): Change[] {
  const changes: Change[] = [];
  if (a.op.method !== b.op.method) changes.push({ kind: "method", from: a.op.method, to: b.op.method });
  if (a.op.path !== b.op.path) changes.push({ kind: "path", from: a.op.path, to: b.op.path });
  changes.push(...diffParameters(a, b), ...diffBody(a, b), ...diffResponses(a, b));
  return changes;
}

function diffParameters(a: Side, b: Side): Change[] {
  const changes: Change[] = [];
  const key = (p: { in: string; name: string }) => `${p.in}:${p.name}`;
  const before = new Map(a.op.parameters.map((p) => [key(p), p]));
  const after = new Map(b.op.parameters.map((p) => [key(p), p]));
  for (const [k, p] of before) if (!after.has(k)) changes.push({ kind: "param-removed", in: p.in, name: p.name });
  for (const [k, p] of after) {
    const old = before.get(k);
    if (!old) {
      changes.push({ kind: "param-added", in: p.in, name: p.name, required: p.required });
      continue;
    }
    if (old.required !== p.required) {
      changes.push({ kind: "param-required", in: p.in, name: p.name, from: old.required, to: p.required });
    }
    const schema = schemaDifference(a.spec, old.schema, b.spec, p.schema);
    if (schema) changes.push({ kind: "param-schema", in: p.in, name: p.name, ...schema });
  }
  return changes;
}

function diffBody(a: Side, b: Side): Change[] {
  const before = a.op.requestBody;
  const after = b.op.requestBody;
  if (!before && !after) return [];
  if (!before) return [{ kind: "body-added", required: after!.required }];
  if (!after) return [{ kind: "body-removed" }];
  const changes: Change[] = [];
  if (before.required !== after.required) changes.push({ kind: "body-required", from: before.required, to: after.required });
  for (const m of diffContent(a.spec, before.content, b.spec, after.content)) {
    if (m.kind === "schema") changes.push({ ...m, kind: "body-schema" });
    else changes.push({ kind: `body-content-${m.kind}`, contentType: m.contentType });
  }
  return changes;
}

function diffResponses(a: Side, b: Side): Change[] {
  const changes: Change[] = [];
  const before = new Map(a.op.responses.map((r) => [r.status, r]));
  const after = new Map(b.op.responses.map((r) => [r.status, r]));
  for (const status of before.keys()) if (!after.has(status)) changes.push({ kind: "response-removed", status });
  for (const [status, r] of after) {
    const old = before.get(status);
    if (!old) {
      changes.push({ kind: "response-added", status });
      continue;
    }
    for (const m of diffContent(a.spec, old.content, b.spec, r.content)) {
      if (m.kind === "schema") changes.push({ ...m, kind: "response-schema", status });
      else changes.push({ kind: `response-content-${m.kind}`, status, contentType: m.contentType });
    }
  }
  return changes;
}

type ContentChange = { kind: "added" | "removed"; contentType: string } | ({ kind: "schema"; contentType: string } & SchemaChange);

function diffContent(specA: OpenApiDocument, a: SpecMedia[], specB: OpenApiDocument, b: SpecMedia[]): ContentChange[] {
  const out: ContentChange[] = [];
  const before = new Map(a.map((m) => [m.contentType, m.schema]));
  const after = new Map(b.map((m) => [m.contentType, m.schema]));
  for (const type of before.keys()) if (!after.has(type)) out.push({ kind: "removed", contentType: type });
  for (const [type, schema] of after) {
    if (!before.has(type)) {
      out.push({ kind: "added", contentType: type });
      continue;
    }
    const change = schemaDifference(specA, before.get(type) ?? {}, specB, schema ?? {});
    if (change) out.push({ kind: "schema", contentType: type, ...change });
  }
  return out;
}

export function isRequestChange(change: Change): boolean {
  return !change.kind.startsWith("response-");
}

/**
 * null when the two bundled schemas are equal; otherwise their short names and the components
 * that differ (added, removed or changed in `$defs`; empty when only the schema itself changed).
 */
function schemaDifference(specA: OpenApiDocument, a: JsonSchema, specB: OpenApiDocument, b: JsonSchema): SchemaChange | null {
  const left = bundleSchema(specA, a);
  const right = bundleSchema(specB, b);
  if (isDeepStrictEqual(left, right)) return null;
  const defsA = (left.$defs ?? {}) as Record<string, unknown>;
  const defsB = (right.$defs ?? {}) as Record<string, unknown>;
  const names = new Set([...Object.keys(defsA), ...Object.keys(defsB)]);
  const components = [...names].filter((n) => !isDeepStrictEqual(defsA[n], defsB[n])).sort(compareStrings);
  const properties = propertyChanges(objectRoot(left), objectRoot(right));
  return { from: schemaSummary(a), to: schemaSummary(b), components, ...(properties ? { properties } : {}) };
}

// The object schema at the root, following a root `$ref` into its own `$defs`.
function objectRoot(schema: JsonSchema): JsonSchema | null {
  let node: unknown = schema;
  const ref = typeof schema.$ref === "string" ? /^#\/\$defs\/([^/]+)$/.exec(schema.$ref) : null;
  if (ref) node = (schema.$defs as Record<string, unknown> | undefined)?.[ref[1]!];
  const props = (node as JsonSchema | undefined)?.properties;
  return props && typeof props === "object" ? (node as JsonSchema) : null;
}

// Shallow: a property whose schema only differs inside a component is reported via `components`.
function propertyChanges(a: JsonSchema | null, b: JsonSchema | null): PropertyChanges | null {
  if (!a || !b) return null;
  const pa = a.properties as Record<string, unknown>;
  const pb = b.properties as Record<string, unknown>;
  const ra = new Set(Array.isArray(a.required) ? (a.required as string[]) : []);
  const rb = new Set(Array.isArray(b.required) ? (b.required as string[]) : []);
  const both = Object.keys(pb).filter((k) => k in pa);
  const result: PropertyChanges = {
    added: Object.keys(pb).filter((k) => !(k in pa)),
    removed: Object.keys(pa).filter((k) => !(k in pb)),
    changed: both.filter((k) => !isDeepStrictEqual(pa[k], pb[k])),
    nowRequired: Object.keys(pb).filter((k) => rb.has(k) && !ra.has(k)),
    nowOptional: both.filter((k) => ra.has(k) && !rb.has(k)),
  };
  return Object.values(result).some((list) => list.length > 0) ? result : null;
}
