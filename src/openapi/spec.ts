// Reading an OpenAPI 3.1 document: list its operations, and turn the schemas an operation uses
// into standalone JSON Schemas (components copied into `$defs`) that Ajv2020 compiles alone.
// The running server reads a connected opencode's own document with it (core/engine/server/spec.ts,
// oc_api); codegen, spec:diff and the contract tests import it from here (load-document.ts reads a
// document from disk).
import { bundleSchema, unescapePointer } from "./bundle.js";
import type { JsonSchema, OpenApiDocument } from "./document.js";

export { bundleSchema };

export type { JsonSchema, OpenApiDocument };

export interface SpecParameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required: boolean;
  schema: JsonSchema;
}

export interface SpecMedia {
  contentType: string;
  schema: JsonSchema | null;
}

export interface SpecResponse {
  status: string;
  description: string;
  content: SpecMedia[];
}

export interface SpecOperation {
  id: string;
  method: string;
  path: string;
  summary: string;
  description: string;
  tags: string[];
  deprecated: boolean;
  parameters: SpecParameter[];
  requestBody: { required: boolean; content: SpecMedia[] } | null;
  responses: SpecResponse[];
}

// Every method OpenAPI allows on a path item; generate.ts rejects the ones the client can't send.
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** All operations, sorted by operationId, with `$ref`s to parameters/bodies/responses resolved. */
export function listOperations(spec: OpenApiDocument): SpecOperation[] {
  const out: SpecOperation[] = [];
  for (const [path, rawItem] of Object.entries(spec.paths)) {
    const item = deref(spec, rawItem);
    const shared = asArray(item.parameters);
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      if (typeof op.operationId !== "string") throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      out.push(readOperation(spec, op, method, path, shared));
    }
  }
  const seen = new Set<string>();
  for (const op of out) {
    if (seen.has(op.id)) throw new Error(`duplicate operationId ${op.id}`);
    seen.add(op.id);
  }
  return out.sort((a, b) => compareStrings(a.id, b.id));
}

// Tests look up many responses in one spec: index it once. Specs are treated as read-only.
const indexes = new WeakMap<OpenApiDocument, Map<string, SpecOperation>>();

export function findOperation(spec: OpenApiDocument, operationId: string): SpecOperation {
  let index = indexes.get(spec);
  if (!index) {
    index = new Map(listOperations(spec).map((o) => [o.id, o]));
    indexes.set(spec, index);
  }
  const op = index.get(operationId);
  if (!op) throw new Error(`unknown operationId ${operationId}`);
  return op;
}

/** `{type:"object", properties, required, additionalProperties:false}` for one parameter location. */
export function parametersSchema(spec: OpenApiDocument, op: SpecOperation, location: SpecParameter["in"]): JsonSchema | null {
  const params = op.parameters.filter((p) => p.in === location);
  if (params.length === 0) return null;
  const properties: Record<string, JsonSchema> = {};
  for (const p of params) properties[p.name] = p.schema;
  const required = params.filter((p) => p.required).map((p) => p.name);
  return bundleSchema(spec, { type: "object", properties, required, additionalProperties: false });
}

/** The bundled `application/json` request body schema, or null when the operation takes none. */
export function requestBodySchema(spec: OpenApiDocument, op: SpecOperation): JsonSchema | null {
  const media = op.requestBody?.content.find((m) => m.contentType === "application/json");
  return media?.schema ? bundleSchema(spec, media.schema) : null;
}

/**
 * The bundled schema of one documented response, for validating what the server sent.
 * Picks `contentType` if given, else `application/json`, else the first content type.
 * Falls back to the `NXX` range and then `default` when the exact status is not documented.
 * Returns null when that response has no body schema; throws on an unknown operationId.
 */
export function responseSchema(spec: OpenApiDocument, operationId: string, status: number | string, contentType?: string): JsonSchema | null {
  const op = findOperation(spec, operationId);
  const code = String(status);
  const response =
    op.responses.find((r) => r.status === code) ??
    op.responses.find((r) => r.status.toUpperCase() === `${code[0]}XX`) ??
    op.responses.find((r) => r.status === "default");
  if (!response) return null;
  const media = contentType
    ? response.content.find((m) => m.contentType === contentType)
    : (response.content.find((m) => m.contentType === "application/json") ?? response.content[0]);
  return media?.schema ? bundleSchema(spec, media.schema) : null;
}

/** A short human name for a schema: "Session[]", "boolean", "Pty | null". */
export function schemaSummary(schema: unknown): string {
  if (!isObject(schema)) return "unknown";
  if (typeof schema.$ref === "string") return unescapePointer(schema.$ref.split("/").pop() ?? "unknown");
  for (const key of ["anyOf", "oneOf"] as const) {
    const list = schema[key];
    if (Array.isArray(list)) return [...new Set(list.map(schemaSummary))].join(" | ");
  }
  if (Array.isArray(schema.allOf)) return schema.allOf.map(schemaSummary).join(" & ");
  if ("const" in schema) return JSON.stringify(schema.const);
  const type = schema.type;
  if (Array.isArray(type)) return type.map((t) => schemaSummary({ ...schema, type: t })).join(" | ");
  if (type === "array") return `${wrapUnion(schemaSummary(schema.items))}[]`;
  if (typeof type === "string") return type;
  return Object.keys(schema).length === 0 ? "unknown" : "object";
}

function readOperation(spec: OpenApiDocument, op: Record<string, unknown>, method: string, path: string, shared: unknown[]): SpecOperation {
  // Operation-level parameters override path-level ones with the same name and location.
  const byKey = new Map<string, SpecParameter>();
  for (const raw of [...shared, ...asArray(op.parameters)]) {
    const p = readParameter(spec, raw, path);
    byKey.set(`${p.in}:${p.name}`, p);
  }
  const body = op.requestBody === undefined ? undefined : deref(spec, op.requestBody);
  const responses = Object.entries(deref(spec, op.responses ?? {})).map(([status, raw]) => {
    const r = deref(spec, raw);
    return { status, description: str(r.description), content: readContent(spec, r.content) };
  });
  return {
    id: op.operationId as string,
    method,
    path,
    summary: str(op.summary),
    description: str(op.description),
    tags: asArray(op.tags).map(String),
    deprecated: op.deprecated === true,
    parameters: [...byKey.values()],
    requestBody: body ? { required: body.required === true, content: readContent(spec, body.content) } : null,
    responses,
  };
}

function readParameter(spec: OpenApiDocument, raw: unknown, path: string): SpecParameter {
  const p = deref(spec, raw);
  const where = p.in;
  if (where !== "path" && where !== "query" && where !== "header" && where !== "cookie") {
    throw new Error(`parameter ${String(p.name)} of ${path} has unknown location ${String(where)}`);
  }
  // A parameter described by `content` instead of `schema` carries its schema in the one media type.
  const content = readContent(spec, p.content);
  const schema = isObject(p.schema) ? p.schema : (content[0]?.schema ?? {});
  return { name: String(p.name), in: where, required: p.required === true || where === "path", schema };
}

function readContent(spec: OpenApiDocument, content: unknown): SpecMedia[] {
  if (!isObject(content)) return [];
  return Object.entries(content).map(([contentType, raw]) => {
    const media = deref(spec, raw);
    return { contentType, schema: isObject(media.schema) ? media.schema : null };
  });
}

// Follows a `$ref` to a reusable non-schema component (parameters, requestBodies, responses,
// pathItems...). Schema refs are left alone: bundleSchema handles those.
function deref(spec: OpenApiDocument, value: unknown, depth = 0): Record<string, unknown> {
  if (!isObject(value)) return {};
  if (typeof value.$ref !== "string") return value;
  if (depth > 20) throw new Error(`$ref cycle at ${value.$ref}`);
  if (!value.$ref.startsWith("#/")) throw new Error(`external $ref ${value.$ref} is not supported`);
  let target: unknown = spec;
  for (const segment of value.$ref.slice(2).split("/")) {
    target = isObject(target) ? target[unescapePointer(segment)] : undefined;
  }
  if (!isObject(target)) throw new Error(`$ref ${value.$ref} points at nothing`);
  return deref(spec, target, depth + 1);
}

function wrapUnion(text: string): string {
  return text.includes(" ") ? `(${text})` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** Code-unit order, independent of locale, so output is the same on every machine. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
