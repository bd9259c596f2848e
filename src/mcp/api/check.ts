// Checking oc_api's arguments with Ajv against the operation's own schemas: compiled validators
// (lazily, once per spec and operation part) and the readable explanation of what is wrong. Runs in
// a worker thread (check-worker.ts): compiling a big schema or explaining thousands of errors
// takes far longer than an MCP server may keep its event loop busy.
import { createRequire } from "node:module";
import type { Ajv2020, ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import type { JsonSchema } from "../../../generated/operations.js";
import type { ApiOperation } from "./catalog.js";
import { deref, refName, shapeOf } from "./schema-text.js";

// Ajv and ajv-formats (CommonJS) are required on the first check, not at import: the helpers below
// are imported by oc_api in the server's own thread, whose start must not pay for a validator.
const require = createRequire(import.meta.url);
function ajvModules(): { Ajv: typeof Ajv2020; addFormats: (ajv: Ajv2020) => void } {
  const formats = require("ajv-formats") as { default?: unknown };
  // Under NodeNext the plugin may sit on `.default`.
  return { Ajv: (require("ajv/dist/2020.js") as { Ajv2020: typeof Ajv2020 }).Ajv2020, addFormats: (formats.default ?? formats) as (ajv: Ajv2020) => void };
}

export type Part = "params" | "query" | "body";
type Json = Record<string, unknown>;

/** A JSON object (not an array, not null). */
export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** What the checker needs of an operation (plain JSON: it crosses to the worker). */
export type CheckedOperation = Pick<ApiOperation, "id" | "pathParams" | "query" | "body" | "bodyRequired">;

// ---------------------------------------------------------------------------------------------
// Validation

// Path and query values arrive from MCP as strings as often as not: those validators coerce (and
// the coerced copy is what gets sent). Bodies are JSON already, so they are checked as given.
const ajvs: Partial<Record<"coerce" | "exact", Ajv2020>> = {};
function ajv(kind: "coerce" | "exact"): Ajv2020 {
  let instance = ajvs[kind];
  if (!instance) {
    const { Ajv, addFormats } = ajvModules();
    instance = new Ajv({ strict: false, allErrors: true, verbose: true, coerceTypes: kind === "coerce" });
    addFormats(instance);
    ajvs[kind] = instance;
  }
  return instance;
}

// Compiled lazily, once per operation part: most operations are never called.
const compiled = new Map<string, ValidateFunction>();
function validatorFor(key: string, schema: JsonSchema, kind: "coerce" | "exact"): ValidateFunction {
  let fn = compiled.get(key);
  if (!fn) {
    fn = ajv(kind).compile(schema);
    compiled.set(key, fn);
  }
  return fn;
}

// A union member is checked on its own (with its root's $defs) to explain why the data fails it.
// Member schemas are objects of the generated table, so identity is a stable cache key.
const memberCache: Record<"coerce" | "exact", WeakMap<JsonSchema, ValidateFunction>> = { coerce: new WeakMap(), exact: new WeakMap() };
function memberValidator(schema: JsonSchema, c: Checker): ValidateFunction {
  let fn = memberCache[c.kind].get(schema);
  if (!fn) {
    fn = ajv(c.kind).compile({ ...schema, $defs: c.root.$defs });
    memberCache[c.kind].set(schema, fn);
  }
  return fn;
}

export function partSchema(op: CheckedOperation, part: Part): JsonSchema | null {
  return part === "params" ? op.pathParams : part === "query" ? op.query : op.body;
}

/** `params`/`body` + `/parts/0/type` → `body.parts[0].type`. */
function pathText(part: string, instancePath: string): string {
  let out = part;
  for (const raw of instancePath.split("/").slice(1)) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    out += /^\d+$/.test(seg) ? `[${seg}]` : /^[A-Za-z_$][\w$]*$/.test(seg) ? `.${seg}` : `[${JSON.stringify(seg)}]`;
  }
  return out;
}

const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);
const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v);
const got = (v: unknown) => (v === undefined ? "missing" : `got ${JSON.stringify(v)?.slice(0, 60) ?? String(v)}`);

function typeFits(schema: JsonSchema, data: unknown): boolean {
  const t = schema.type;
  if (t === undefined) return true;
  const types = Array.isArray(t) ? (t as string[]) : [t as string];
  const actual = jsonType(data);
  return types.some((x) => x === actual || (x === "number" && actual === "integer"));
}

/** The one-value `enum`/`const` of `key` in an object schema: how opencode tags union members. */
function tagOf(schema: JsonSchema, key: string): unknown {
  const prop = (schema.properties as Record<string, JsonSchema> | undefined)?.[key];
  if (!prop) return undefined;
  if (prop.const !== undefined) return prop.const;
  return Array.isArray(prop.enum) && prop.enum.length === 1 ? prop.enum[0] : undefined;
}

interface Checker {
  op: CheckedOperation;
  part: Part;
  root: JsonSchema;
  kind: "coerce" | "exact";
}

/** Readable lines for Ajv's errors. A failed union is explained once, via the member the data meant. */
function explain(errors: ErrorObject[], base: string, c: Checker): string[] {
  const lines: string[] = [];
  const unions = errors.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf").sort((a, b) => a.instancePath.length - b.instancePath.length);
  const handled: string[] = [];
  for (const u of unions) {
    if (handled.some((h) => under(u.instancePath, h))) continue;
    handled.push(u.instancePath);
    lines.push(...explainUnion(u, base, c));
  }
  for (const e of errors) {
    if (e.keyword === "anyOf" || e.keyword === "oneOf" || handled.some((h) => under(e.instancePath, h))) continue;
    lines.push(explainOne(e, base, c));
  }
  return [...new Set(lines)];
}

function explainOne(e: ErrorObject, base: string, c: Checker): string {
  const where = pathText(c.part, base + e.instancePath);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "required":
      return `${pathText(c.part, `${base}${e.instancePath}/${String(p.missingProperty)}`)}: is required`;
    case "additionalProperties": {
      const allowed = Object.keys((e.parentSchema?.properties as Json | undefined) ?? {});
      return `${pathText(c.part, `${base}${e.instancePath}/${String(p.additionalProperty)}`)}: is not allowed${allowed.length ? `; allowed: ${allowed.join(", ")}` : ""}`;
    }
    case "enum":
      return `${where}: must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")} (${got(e.data)})`;
    case "const":
      return `${where}: must be ${JSON.stringify(p.allowedValue)} (${got(e.data)})`;
    case "type":
      return `${where}: must be ${String(p.type)} (${got(e.data)})`;
    default:
      return `${where}: ${e.message ?? e.keyword}`;
  }
}

function explainUnion(u: ErrorObject, base: string, c: Checker): string[] {
  const where = pathText(c.part, base + u.instancePath);
  const members = (u.schema as JsonSchema[]).map((raw) => ({ raw, schema: deref(raw, c.root) }));
  let fits = members.filter((m) => typeFits(m.schema, u.data));
  const label = (m: { raw: JsonSchema; schema: JsonSchema }) => refName(m.raw) ?? shapeOf(m.schema, c.root, 1);
  if (fits.length === 0) return [`${where}: must be ${members.map(label).join(" or ")} (${got(u.data)})`];
  // Tagged union (`type: "text" | "file" | …`): check against the member the tag names.
  if (isObject(u.data)) {
    const keys = Object.keys((fits[0]!.schema.properties as Json | undefined) ?? {});
    const tag = keys.find((k) => fits.every((m) => tagOf(m.schema, k) !== undefined));
    if (tag && fits.length > 1) {
      const value = u.data[tag];
      const hit = fits.find((m) => tagOf(m.schema, tag) === value);
      if (!hit)
        return [
          `${pathText(c.part, `${base}${u.instancePath}/${tag}`)}: must be one of ${fits.map((m) => JSON.stringify(tagOf(m.schema, tag))).join(", ")} (${got(value)})`,
        ];
      fits = [hit];
    }
  }
  if (fits.length === 1) {
    const m = fits[0]!;
    const check = memberValidator(m.schema, c);
    if (!check(structuredClone(u.data))) {
      const lines = explain(check.errors ?? [], base + u.instancePath, c);
      if (lines.length > 0) return lines;
    }
  }
  return [`${where}: must match one of: ${fits.map((m) => `${label(m)} ${shapeOf(m.schema, c.root, 0).slice(0, 200)}`).join("; ")}`];
}

export interface Checked {
  params: Json;
  query: Json;
  body: unknown;
  problems: string[];
  failed: Part[];
}

export function check(op: CheckedOperation, input: { params: Json; query: Json; body: unknown }, catalogKey: string): Checked {
  const out: Checked = { params: structuredClone(input.params), query: structuredClone(input.query), body: input.body, problems: [], failed: [] };
  for (const part of ["params", "query", "body"] as const) {
    const schema = partSchema(op, part);
    const value = out[part];
    if (!schema) {
      const given = part === "body" ? value !== undefined : Object.keys(value as Json).length > 0;
      if (given) out.problems.push(`${part}: ${op.id} takes no ${part === "params" ? "path parameters" : part === "query" ? "query parameters" : "body"}`);
      continue;
    }
    if (part === "body" && value === undefined) {
      if (op.bodyRequired) {
        out.problems.push("body: is required");
        out.failed.push(part);
      }
      continue;
    }
    const kind = part === "body" ? "exact" : "coerce";
    const validate = validatorFor(`${catalogKey}:${op.id}:${part}`, schema, kind);
    if (!validate(value)) {
      // A huge wrong input has as many errors as items: explaining the first 20 says enough.
      out.problems.push(...explain((validate.errors ?? []).slice(0, 20), "", { op, part, root: schema, kind }));
      out.failed.push(part);
    }
  }
  return out;
}
