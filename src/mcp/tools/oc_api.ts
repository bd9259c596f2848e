// oc_api: calls any opencode HTTP operation when no dedicated tool fits. Arguments are checked with
// Ajv against the operation's own schemas before anything is sent, so a model gets every mistake
// (with paths and the expected shape) in one answer instead of opencode's first "Missing key".
// Big answers are cut to valid JSON with a note on how to page or narrow.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { z } from "zod";
import { clamped } from "../common.js";
import type { JsonSchema } from "../../../generated/operations.js";
import { UsageError } from "../../core/errors.js";
import { defineTool } from "../tool.js";
import { callServerOperation } from "./api-call.js";
import { catalogFor, pinnedOperation, type ApiCatalog, type ApiOperation } from "./api-catalog.js";
import { deref, matchPath, methodOf, refName, resolveOperation, shapeOf, unknownOperation } from "./oc_api_ops.js";

// ajv-formats is CommonJS: under NodeNext its plugin may sit on `.default`.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

type Part = "params" | "query" | "body";
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------------------------------------
// Validation

// Path and query values arrive from MCP as strings as often as not: those validators coerce (and
// the coerced copy is what gets sent). Bodies are JSON already, so they are checked as given.
const ajvs: Partial<Record<"coerce" | "exact", Ajv2020>> = {};
function ajv(kind: "coerce" | "exact"): Ajv2020 {
  let instance = ajvs[kind];
  if (!instance) {
    instance = new Ajv2020({ strict: false, allErrors: true, verbose: true, coerceTypes: kind === "coerce" });
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

function partSchema(op: ApiOperation, part: Part): JsonSchema | null {
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
  op: ApiOperation;
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
      if (!hit) return [`${pathText(c.part, `${base}${u.instancePath}/${tag}`)}: must be one of ${fits.map((m) => JSON.stringify(tagOf(m.schema, tag))).join(", ")} (${got(value)})`];
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

/** Values (objects, arrays, scalars) a call may carry in params, query and body together. */
export const MAX_VALUES = 10_000;

/** How many values `input` holds, counting up to `limit + 1` only (a walk without recursion). */
function countValues(input: unknown, limit: number): number {
  let n = 0;
  const stack: unknown[] = [input];
  while (stack.length > 0 && n <= limit) {
    const v = stack.pop();
    n += 1;
    if (Array.isArray(v)) for (let i = 0; i < v.length && stack.length <= limit; i++) stack.push(v[i]);
    else if (isObject(v)) for (const key in v) if (stack.length <= limit) stack.push(v[key]);
  }
  return n;
}

interface Checked {
  params: Json;
  query: Json;
  body: unknown;
  problems: string[];
  failed: Part[];
}

function check(op: ApiOperation, input: { params: Json; query: Json; body: unknown }, catalogKey: string): Checked {
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

function validationError(op: ApiOperation, checked: Checked): UsageError {
  const expected = checked.failed.map((part) => `Expected ${part === "params" ? "params (path)" : part}: ${shapeOf(partSchema(op, part))}`);
  return new UsageError(
    [
      `${op.id} (${methodOf(op)} ${op.path}): the arguments do not match opencode's schema, so nothing was sent.`,
      ...checked.problems.map((p) => `- ${p}`),
      ...expected,
      `(* = required) Full schemas: oc_api_ops {operation: "${op.id}"}.`,
    ].join("\n"),
  );
}

// ---------------------------------------------------------------------------------------------
// Shaping the answer

const PAGING = ["limit", "cursor", "before", "after", "start", "order"];
const SCOPE = new Set(["directory", "workspace", "location"]);

function narrowHint(op: ApiOperation, maxChars: number, suggestLimit?: number): string {
  const names = Object.keys((op.query?.properties as Json | undefined) ?? {});
  const paging = names.filter((n) => PAGING.includes(n));
  const filters = names.filter((n) => !PAGING.includes(n) && !SCOPE.has(n));
  const parts: string[] = [];
  if (paging.length > 0) parts.push(`page with query ${paging.map((n) => `\`${n}\``).join(", ")}${paging.includes("limit") && suggestLimit !== undefined ? ` (e.g. query: {limit: ${Math.max(1, suggestLimit)}})` : ""}`);
  if (filters.length > 0) parts.push(`narrow with query ${filters.map((n) => `\`${n}\``).join(", ")}`);
  parts.push(`raise max_chars (now ${maxChars})`);
  return `To see more: ${parts.join("; or ")}.`;
}

/** How many leading items of `items` fit in `budget` characters of JSON. */
function fitting(items: unknown[], budget: number): number {
  let used = 2;
  let n = 0;
  for (const item of items) {
    const len = (JSON.stringify(item) ?? "null").length + (n > 0 ? 1 : 0);
    if (used + len > budget) break;
    used += len;
    n += 1;
  }
  return n;
}

interface Shaped {
  result: unknown;
  /** What the text answer shows. */
  json: string;
  truncated: boolean;
  chars: number;
  note?: string;
}

/** Cuts a large result to at most `maxChars` of JSON, keeping it valid JSON where it can. */
function shape(op: ApiOperation, data: unknown, maxChars: number): Shaped {
  const result = data === undefined ? null : data;
  const json = JSON.stringify(result) ?? "null";
  if (json.length <= maxChars) return { result, json, truncated: false, chars: json.length };
  if (Array.isArray(result)) {
    const n = fitting(result, maxChars);
    if (n > 0) {
      const cut = result.slice(0, n);
      return { result: cut, json: JSON.stringify(cut), truncated: true, chars: json.length, note: `Showing ${n} of ${result.length} items. ${narrowHint(op, maxChars, n)}` };
    }
  }
  if (isObject(result)) {
    // v2 lists wrap the array (`{data: [...], cursor}`): cut the biggest array and keep the rest.
    const arrays = Object.entries(result).filter((e): e is [string, unknown[]] => Array.isArray(e[1]));
    const biggest = arrays.sort((a, b) => JSON.stringify(b[1]).length - JSON.stringify(a[1]).length)[0];
    if (biggest) {
      const [key, items] = biggest;
      const rest = JSON.stringify({ ...result, [key]: [] }).length;
      const n = rest < maxChars ? fitting(items, maxChars - rest + 2) : 0;
      if (n > 0) {
        const cut = { ...result, [key]: items.slice(0, n) };
        return { result: cut, json: JSON.stringify(cut), truncated: true, chars: json.length, note: `Showing ${n} of ${items.length} items of "${key}". ${narrowHint(op, maxChars, n)}` };
      }
    }
  }
  // Last resort: a text preview (of the raw text when opencode answered text, e.g. a diff).
  const preview = (typeof result === "string" ? result : json).slice(0, maxChars);
  return {
    result: preview,
    json: `${preview} …`,
    truncated: true,
    chars: json.length,
    note: `The result (${json.length} chars of JSON) is cut to a text preview of its first ${maxChars} chars. ${narrowHint(op, maxChars)}`,
  };
}

// ---------------------------------------------------------------------------------------------
// The tool

type LooseCall = (id: string, args: { path?: Json; query?: Json; body?: unknown }, options: { signal?: AbortSignal }) => Promise<unknown>;

interface Picked {
  op: ApiOperation;
  params: Record<string, string>;
  query: Record<string, string>;
}

function pickOperation(args: { operation?: string; method?: string; path?: string }, catalog: ApiCatalog): Picked {
  let byPath: Picked | undefined;
  const full = (r: { op: Parameters<ApiCatalog["full"]>[0]; params: Record<string, string>; query: Record<string, string> }) => ({ ...r, op: catalog.full(r.op) });
  if (args.path !== undefined) {
    const method = (args.method ?? "GET").toUpperCase();
    if (!["GET", "POST", "PUT", "PATCH", "DELETE"].includes(method)) throw new UsageError(`method must be GET, POST, PUT, PATCH or DELETE (got ${JSON.stringify(String(args.method).slice(0, 20))}).`);
    const hit = matchPath(method, args.path, catalog);
    if (!hit) throw unknownOperation(`${method} ${args.path}`, catalog);
    byPath = full(hit);
  } else if (args.method !== undefined && args.operation === undefined) {
    throw new UsageError(`method needs a path too, e.g. {method: "GET", path: "/session/ses_..."}; or give operation: "<id>".`);
  }
  if (args.operation !== undefined) {
    const hit = resolveOperation(args.operation, catalog);
    if (!hit) throw unknownOperation(args.operation, catalog);
    const byId = full(hit);
    if (byPath && byPath.op.id !== byId.op.id) {
      throw new UsageError(`operation "${byId.op.id}" is ${methodOf(byId.op)} ${byId.op.path}, but method/path name ${byPath.op.id}: give one or the other.`);
    }
    return byPath ?? byId;
  }
  if (byPath) return byPath;
  throw new UsageError(`Name the operation: operation: "<id>" (e.g. "session.list"), or method + path (e.g. GET /session/ses_...). Find ids with oc_api_ops.`);
}

/** Puts `directory` where this operation takes it: the v1 `directory` query, or v2's `location`. */
function withDirectory(op: ApiOperation, query: Json, directory: string): Json {
  const props = (op.query?.properties ?? {}) as Record<string, JsonSchema>;
  if (props.directory) {
    if (query.directory !== undefined && query.directory !== directory) throw new UsageError(`directory and query.directory differ: give one.`);
    return { ...query, directory };
  }
  if ((props.location?.properties as Json | undefined)?.directory) {
    return { ...query, location: { ...(isObject(query.location) ? query.location : {}), directory } };
  }
  const takes = op.query ? `its query: ${shapeOf(op.query)}` : "it takes no query parameters";
  throw new UsageError(`${op.id} does not take a directory (${takes}). Leave directory out.`);
}

/** A JSON body sent as a string (some clients do that with `unknown` fields). */
function parseBody(op: ApiOperation, body: unknown): unknown {
  if (typeof body !== "string" || !op.body || op.body.type === "string") return body;
  const text = body.trim();
  if (!text.startsWith("{") && !text.startsWith("[")) return body;
  try {
    return JSON.parse(text);
  } catch {
    return body;
  }
}

function fill(template: string, params: Json): string {
  return template.replace(/\{([^}]+)\}/g, (whole, name: string) => (params[name] === undefined ? whole : encodeURIComponent(String(params[name]))));
}

export const ocApi = defineTool({
  name: "oc_api",
  title: "Call the API",
  description:
    "Call an opencode HTTP operation when no tool fits: `operation` id (e.g. session.list), or `method` + `path` (a concrete path fills params). Checked against the spec before sending.",
  toolset: "api",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  input: {
    operation: z.string().optional(),
    method: z.string().optional(),
    path: z.string().optional(),
    params: z.record(z.string(), z.unknown()).optional(),
    query: z.record(z.string(), z.unknown()).optional(),
    body: z.unknown().optional(),
    directory: z.string().optional(),
    max_chars: clamped(100, 1_000_000, true).optional(),
  },
  output: {
    result: z.unknown(),
    truncated: z.boolean(),
  },
  async run(args, ctx) {
    const catalog = await catalogFor(ctx);
    const { op, params: fromPath, query: fromPathQuery } = pickOperation(args, catalog);
    if (op.streaming) {
      throw new UsageError(`${op.id} is an event stream, which oc_api does not read. To wait for a session's turn use oc_wait (or oc_delegate, which waits by default); oc_result reads a session's state now.`);
    }
    if (op.websocket) {
      throw new UsageError(`${op.id} opens a WebSocket (an interactive terminal), which oc_api cannot hold open. Run a command in a session with oc_session action "shell", or open the terminal from an opencode client.`);
    }
    if (op.path.includes("*")) throw new UsageError(`${op.id} (${op.path}) has a wildcard path that oc_api cannot fill; read files with operation "file.read" (query: {path}).`);
    if (ctx.config.readOnly && op.method !== "get") {
      throw new UsageError(`${op.id} is ${methodOf(op)}, and OPENCODE_CONDUCTOR_READ_ONLY is set: only GET operations run. Unset OPENCODE_CONDUCTOR_READ_ONLY to allow changes.`);
    }
    let query: Json = { ...fromPathQuery, ...args.query };
    if (args.directory !== undefined) query = withDirectory(op, query, args.directory);
    // opencode's spec marks few bodies required, yet it rejects a missing one ("Missing key"): an
    // object body defaults to {}, so its required fields are reported here instead.
    const body = parseBody(op, args.body) ?? (op.body?.type === "object" ? {} : undefined);
    // Validation cost grows with the input (Ajv reports every error): a hand-sized call is far below this.
    if (countValues([args.params, query, body], MAX_VALUES) > MAX_VALUES) {
      throw new UsageError(`${op.id}: params, query and body hold more than ${MAX_VALUES} values together, so nothing was checked or sent. Send less per call (page or split the request).`);
    }
    const checked = check(op, { params: { ...fromPath, ...args.params }, query, body }, catalog.key);
    if (checked.problems.length > 0) throw validationError(op, checked);

    const conductor = await ctx.conductor();
    const request = { path: checked.params, query: checked.query, body: checked.body };
    // A pinned operation goes through the typed client; one only the server's spec has, directly.
    const pinned = pinnedOperation(op.id);
    const data =
      pinned && pinned.method === op.method && pinned.path === op.path
        ? await (conductor.client.call as unknown as LooseCall)(op.id, request, { signal: ctx.signal })
        : await callServerOperation(conductor.client, op, request, { signal: ctx.signal });

    const maxChars = args.max_chars ?? 20_000;
    const shaped = shape(op, data, maxChars);
    const head = `${op.id} (${methodOf(op)} ${fill(op.path, checked.params)}): ok, ${data === undefined ? "no content" : `${shaped.chars} chars`}${shaped.truncated ? ", truncated" : ""}`;
    const text = [head, shaped.json, ...(shaped.note ? [shaped.note] : [])].join("\n");
    return {
      text,
      data: { operation: op.id, status: "ok" as const, result: shaped.result, truncated: shaped.truncated, chars: shaped.chars, ...(shaped.note ? { note: shaped.note } : {}) },
    };
  },
});
