// oc_api_ops: the catalogue of opencode's HTTP operations: the connected server's own when its spec
// differs from the pin, else the pinned table (src/mcp/api/catalog.ts). Search it, or read one operation's
// full input before calling it with oc_api. The lookups oc_api shares (an id or "METHOD /path" to an
// operation, close matches for a wrong name, a compact rendering of a JSON Schema) live here too, so
// both tools name and describe operations the same way. Every text input is bounded first: a long
// one would otherwise keep the event loop busy for seconds.
import { z } from "zod";
import { clamped } from "../shared-fields.js";
import type { JsonSchema } from "../../../generated/operations.js";
import { quoted, UsageError } from "../../core/errors.js";
import { unsupported } from "../../core/server/feature-guard.js";
import { defineTool } from "../tool-def.js";
import { catalogFor, PINNED_CATALOG, type ApiCatalog, type ApiHead, type ApiOperation } from "../api/catalog.js";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

export type Access = "read" | "write";
export const accessOf = (op: Pick<ApiHead, "readOnly">): Access => (op.readOnly ? "read" : "write");
export const methodOf = (op: Pick<ApiHead, "method">): string => op.method.toUpperCase();

/** Longest `search` looked at, and longest operation reference (`id` or `METHOD /path`). */
export const MAX_SEARCH = 200;
export const MAX_REF = 300;

/** A clear error for a text argument that is too long, quoting only its start. */
export function tooLong(field: string, value: string, max: number, hint: string): UsageError {
  return new UsageError(`\`${field}\` is ${value.length} characters; at most ${max} are accepted. ${hint} It began: ${JSON.stringify(value.slice(0, 80))}${value.length > 80 ? "…" : ""}`);
}

/** The operation's summary on one line of at most 100 characters. */
export function oneLine(op: Pick<ApiHead, "summary" | "description">): string {
  const text = (op.summary || op.description.split(/(?<=\.)\s/)[0] || "").replace(/\s+/g, " ").trim();
  return text.length > 100 ? `${text.slice(0, 99)}…` : text;
}

// ---------------------------------------------------------------------------------------------
// Finding operations

export interface ResolvedOperation {
  op: ApiHead;
  /** Path parameters read from a concrete path (`/session/ses_1` → `{sessionID: "ses_1"}`). */
  params: Record<string, string>;
  /** Query parameters written after `?` in the path. */
  query: Record<string, string>;
}

/** An id (`session.get`), or `METHOD /path` where the path is a template or a concrete URL path. */
export function resolveOperation(ref: string, catalog: ApiCatalog = PINNED_CATALOG): ResolvedOperation | undefined {
  if (ref.length > MAX_REF) throw tooLong("operation", ref, MAX_REF, 'Give an id (e.g. "session.list") or "METHOD /path".');
  const text = ref.trim();
  const byId = catalog.byId(text) ?? catalog.heads.find((op) => op.id.toLowerCase() === text.toLowerCase());
  if (byId) return { op: byId, params: {}, query: {} };
  const m = /^([A-Za-z]+)\s+(\S+)$/.exec(text);
  if (m) return matchPath(m[1]!, m[2]!, catalog);
  if (text.startsWith("/")) {
    // A bare path is fine when only one method serves it.
    const hits = METHODS.map((method) => matchPath(method, text, catalog)).filter((r): r is ResolvedOperation => r !== undefined);
    return hits.length === 1 ? hits[0] : undefined;
  }
  return undefined;
}

/** Matches a path (template or concrete, optional `?query`) against the operations of one method. */
export function matchPath(method: string, rawPath: string, catalog: ApiCatalog = PINNED_CATALOG): ResolvedOperation | undefined {
  if (rawPath.length > MAX_REF * 10) throw tooLong("path", rawPath, MAX_REF * 10, "Give the operation's path, e.g. /session/ses_1/message.");
  const want = method.toLowerCase();
  const [pathPart = "", queryPart] = rawPath.trim().split("?", 2);
  const normal = ("/" + pathPart.replace(/^\/+/, "")).replace(/(.)\/+$/, "$1");
  const segs = normal.split("/");
  let best: ResolvedOperation | undefined;
  let bestLiterals = -1;
  for (const op of catalog.heads) {
    if (op.method !== want) continue;
    const tpl = op.path.split("/");
    if (tpl.length !== segs.length) continue;
    const params: Record<string, string> = {};
    let literals = 0;
    let ok = true;
    for (let i = 0; i < tpl.length && ok; i++) {
      const t = tpl[i]!;
      const s = segs[i]!;
      const name = /^\{(.+)\}$/.exec(t)?.[1];
      if (name === undefined) {
        if (t === s) literals += 1;
        else ok = false;
      } else if (s === t) {
        // the template itself was given: the value comes from `params`
      } else if (s === "") {
        ok = false;
      } else {
        params[name] = safeDecode(s);
      }
    }
    // `/session/status` must beat `/session/{sessionID}`: prefer the most literal segments.
    if (ok && literals > bestLiterals) {
      best = { op, params, query: {} };
      bestLiterals = literals;
    }
  }
  if (best && queryPart) best.query = Object.fromEntries(new URLSearchParams(queryPart));
  return best;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function words(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** Same word give or take a typo or a plural: edit distance ≤ 1 per 4 letters, or a 4-letter common prefix. */
function near(a: string, b: string): boolean {
  if (commonPrefix(a, b) >= 4) return true;
  const limit = Math.max(1, Math.floor(Math.min(a.length, b.length) / 4));
  if (Math.abs(a.length - b.length) > limit) return false;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]! <= limit;
}

/** Up to `n` operations close to a wrong reference: shared words first, then a shared prefix. */
export function suggestOperations(ref: string, n = 5, catalog: ApiCatalog = PINNED_CATALOG): ApiHead[] {
  const lower = ref.trim().toLowerCase();
  const refWords = new Set(words(ref));
  const refPath = /\/\S*/.exec(ref)?.[0]?.toLowerCase();
  const scored = catalog.heads.map((op) => {
    const opWords = new Set(words(`${op.id} ${op.path}`));
    let score = 0;
    for (const w of refWords) {
      if (opWords.has(w)) score += 10;
      else if (w.length >= 4 && [...opWords].some((o) => near(o, w))) score += 7; // typos, plurals
    }
    score += commonPrefix(lower, op.id.toLowerCase());
    if (refPath) score += commonPrefix(refPath, op.path.toLowerCase());
    return { op, score };
  });
  return scored
    .filter((s) => s.score > 1)
    .sort((a, b) => b.score - a.score || a.op.id.localeCompare(b.op.id))
    .slice(0, n)
    .map((s) => s.op);
}

/**
 * The error for a reference that names no operation of the catalog: a pinned operation the
 * connected server lacks is explained (its version, the first tested release with it); anything
 * else gets the closest ids.
 */
export function unknownOperation(ref: string, catalog: ApiCatalog = PINNED_CATALOG): Error {
  if (catalog.spec) {
    const pinned = resolveOperation(ref, PINNED_CATALOG)?.op;
    const refusal = pinned && unsupported(catalog.spec, pinned);
    if (refusal) return refusal;
  }
  const close = suggestOperations(ref, 5, catalog);
  const hint = close.length > 0 ? ` Closest: ${close.map((op) => `${op.id} (${methodOf(op)} ${op.path})`).join(", ")}.` : "";
  return new UsageError(`No opencode operation ${quoted(ref)}.${hint} Search with oc_api_ops {search: "<words>"}.`);
}

function searchOperations(query: string, catalog: ApiCatalog): ApiHead[] {
  const want = words(query);
  const hits = catalog.heads.filter((op) => {
    const hay = [op.id, op.method, op.path, op.summary, ...op.tags].join(" ").toLowerCase();
    return want.every((w) => hay.includes(w));
  });
  // Words that name the id rank first (`session list` → session.list before v2.session.list).
  const rank = (op: ApiHead) => {
    const idWords = words(op.id);
    return want.reduce((sum, w) => sum + (idWords.includes(w) ? 3 : op.id.toLowerCase().includes(w) ? 2 : 0), 0) - idWords.length * 0.1;
  };
  return hits.sort((a, b) => rank(b) - rank(a) || a.id.localeCompare(b.id));
}

/** `session`, `v2.session`, `experimental`: how the index groups ids. */
function groupOf(op: ApiHead): string {
  const parts = op.id.split(".");
  return parts[0] === "v2" && parts.length > 2 ? `v2.${parts[1]}` : parts[0]!;
}

// ---------------------------------------------------------------------------------------------
// Rendering JSON Schemas compactly (for answers and validation errors)

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
  if (Array.isArray(s.enum)) return s.enum.length > 8 ? `${s.enum.slice(0, 8).map((v) => JSON.stringify(v)).join("|")}|…` : s.enum.map((v) => JSON.stringify(v)).join("|");
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

// ---------------------------------------------------------------------------------------------
// The tool

const Row = z.object({
  id: z.string(),
  method: z.string(),
  path: z.string(),
  summary: z.string(),
  access: z.enum(["read", "write"]),
});
type RowT = z.output<typeof Row>;

const Schema = z.record(z.string(), z.unknown());

const Detail = z.object({
  id: z.string(),
  method: z.string(),
  path: z.string(),
  summary: z.string(),
  description: z.string(),
  access: z.enum(["read", "write"]),
  streaming: z.boolean().describe("An event stream: oc_api refuses it (use oc_wait / oc_delegate)."),
  websocket: z.boolean().describe("Opens a WebSocket (a terminal): oc_api refuses it."),
  path_params: Schema.nullable().describe("JSON Schema of the path parameters (oc_api `params`)."),
  query: Schema.nullable().describe("JSON Schema of the query parameters (oc_api `query`)."),
  body: Schema.nullable().describe("JSON Schema of the JSON body (oc_api `body`)."),
  body_required: z.boolean(),
  responses: z.array(z.object({ status: z.string(), description: z.string(), schema: z.string().nullable() })),
});
type DetailT = z.output<typeof Detail>;

const rowOf = (op: ApiHead): RowT => ({ id: op.id, method: methodOf(op), path: op.path, summary: oneLine(op), access: accessOf(op) });

function rowLines(rows: RowT[]): string[] {
  const idWidth = Math.max(0, ...rows.map((r) => r.id.length));
  const reqWidth = Math.max(0, ...rows.map((r) => r.method.length + 1 + r.path.length));
  return rows.map((r) => `${r.id.padEnd(idWidth)}  ${`${r.method} ${r.path}`.padEnd(reqWidth)}  ${r.summary} [${r.access}]`);
}

function detailOf(op: ApiOperation): DetailT {
  return {
    ...rowOf(op),
    summary: op.summary,
    description: op.description,
    streaming: op.streaming,
    websocket: op.websocket,
    path_params: op.pathParams,
    query: op.query,
    body: op.body,
    body_required: op.bodyRequired,
    responses: op.responses.map((r) => ({ status: r.status, description: r.description, schema: r.schema })),
  };
}

function detailText(op: ApiOperation): string {
  const lines = [`${op.id}  ${methodOf(op)} ${op.path}  [${accessOf(op)}]${op.streaming ? " [event stream: not callable with oc_api]" : ""}${op.websocket ? " [WebSocket: not callable with oc_api]" : ""}`, op.summary];
  if (op.description && op.description !== op.summary) lines.push(op.description);
  if (op.pathParams) lines.push(`params (path): ${shapeOf(op.pathParams)}`);
  if (op.query) lines.push(`query: ${shapeOf(op.query)}`);
  if (op.body) lines.push(`body${op.bodyRequired ? " (required)" : ""}: ${shapeOf(op.body)}`);
  lines.push(`responses: ${op.responses.map((r) => `${r.status} ${r.schema ?? r.description}`).join(", ")}`);
  lines.push("(* = required)");
  if (op.body) lines.push(`body JSON Schema: ${JSON.stringify(op.body)}`);
  return lines.join("\n");
}

export const ocApiOps = defineTool({
  name: "oc_api_ops",
  title: "Find API operations",
  description:
    "Find opencode HTTP operations for oc_api: `search` → id, method, path, summary; `operation` (id or `METHOD /path`) → its schemas.",
  toolset: "api",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: {
    search: z.string().optional(),
    operation: z.string().optional(),
    limit: clamped(1, 100, true).optional(),
  },
  output: {
    operations: z.array(z.unknown()),
  },
  async run(args, ctx) {
    if (args.search !== undefined && args.search.length > MAX_SEARCH) throw tooLong("search", args.search, MAX_SEARCH, 'Search with a few words, e.g. "session messages".');
    const catalog = await catalogFor(ctx);
    if (args.operation !== undefined) {
      const found = resolveOperation(args.operation, catalog);
      if (!found) throw unknownOperation(args.operation, catalog);
      const op = catalog.full(found.op);
      return { text: detailText(op), data: { total: 1, operations: [rowOf(op)], operation: detailOf(op) } };
    }
    const limit = args.limit ?? 25;
    const search = args.search?.trim();
    const hits = search ? searchOperations(search, catalog) : [...catalog.heads];
    const rows = hits.slice(0, limit).map(rowOf);
    const source = catalog.source === "server" ? `the connected opencode ${catalog.version}'s own spec` : `opencode ${catalog.version}'s spec (pinned)`;
    const lines: string[] = [];
    if (search) {
      lines.push(hits.length === 0 ? `No operation of ${source} matches "${search}". Try fewer or other words, or call oc_api_ops with no arguments for the index.` : `${hits.length} operations match "${search}"${hits.length > limit ? ` (showing ${limit}; raise limit or add words)` : ""}:`);
    } else {
      const groups = new Map<string, number>();
      for (const op of catalog.heads) groups.set(groupOf(op), (groups.get(groupOf(op)) ?? 0) + 1);
      lines.push(`${catalog.heads.length} operations of ${source} in ${groups.size} groups: ${[...groups].map(([g, n]) => `${g} (${n})`).join(", ")}.`);
      lines.push(`First ${rows.length}; search by words (e.g. search: "session messages") to find the rest:`);
    }
    lines.push(...rowLines(rows));
    if (rows.length > 0) lines.push('Full input of one: oc_api_ops {operation: "<id>"}; call it with oc_api.');
    return { text: lines.join("\n"), data: { total: hits.length, operations: rows, source: catalog.source, version: catalog.version } };
  },
});
