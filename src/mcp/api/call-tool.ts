// oc_api's call (tools/oc_api.ts holds its definition and loads this on its first call: the operation
// table, the catalog and the checks are nothing a server's start needs). Arguments are checked with
// Ajv against the operation's own schemas before anything is sent, so a model gets every mistake
// (with paths and the expected shape) in one answer instead of opencode's first "Missing key".
// Big answers are cut to valid JSON with a note on how to page or narrow (answer-shape.ts).
import { operations, type JsonSchema, type OperationId } from "../../../generated/operations.js";
import { UsageError } from "../../core/errors.js";
import type { ToolAnswer, ToolContext } from "../tool-def.js";
import { callServerOperation } from "./call.js";
import { catalogFor, pinnedOperation, type ApiCatalog, type ApiOperation } from "./catalog.js";
import { shape } from "./answer-shape.js";
import { isObject, partSchema, type Checked } from "./check.js";
import { checkOffThread } from "./checker.js";
import { matchPath, methodOf, resolveOperation, unknownOperation } from "./operation-search.js";
import { shapeOf } from "./schema-text.js";

type Json = Record<string, unknown>;

/** Longest path parameter value: they are ids. */
const MAX_PARAM_CHARS = 1_000;

/** Values (objects, arrays, scalars) a call may carry in params, query and body together. */
export const MAX_VALUES = 10_000;

/** How deep params, query and body may nest: far past any opencode schema, well short of the validator's stack. */
export const MAX_DEPTH = 100;

/** How many values `parts` hold (counting up to `limit + 1` only) and how deep they nest (up to `MAX_DEPTH + 1`): a walk without recursion. */
function measureValues(parts: unknown[], limit: number): { values: number; depth: number } {
  let values = 0;
  let depth = 0;
  const stack = parts.map((part): [unknown, number] => [part, 0]);
  while (stack.length > 0 && values <= limit && depth <= MAX_DEPTH) {
    const [v, level] = stack.pop()!;
    values += 1;
    depth = Math.max(depth, level);
    if (Array.isArray(v)) for (let i = 0; i < v.length && stack.length <= limit; i++) stack.push([v[i], level + 1]);
    else if (isObject(v)) for (const key in v) if (stack.length <= limit) stack.push([v[key], level + 1]);
  }
  return { values, depth };
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

type LooseCall = (id: string, args: { path?: Json; query?: Json; body?: unknown }, options: { signal?: AbortSignal }) => Promise<unknown>;

interface Picked {
  op: ApiOperation;
  params: Record<string, string>;
  query: Record<string, string>;
}

function pickOperation(args: { operation?: string; method?: string; path?: string }, catalog: ApiCatalog): Picked {
  let byPath: Picked | undefined;
  const full = (r: { op: Parameters<ApiCatalog["full"]>[0]; params: Record<string, string>; query: Record<string, string> }) => ({
    ...r,
    op: catalog.full(r.op),
  });
  if (args.path !== undefined) {
    const method = (args.method ?? "GET").toUpperCase();
    if (!["GET", "POST", "PUT", "PATCH", "DELETE"].includes(method))
      throw new UsageError(`method must be GET, POST, PUT, PATCH or DELETE (got ${JSON.stringify(String(args.method).slice(0, 20))}).`);
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

/** The HTTP method a call sends: the operation's, else the one given. */
export function sentMethod(args: Record<string, unknown>): string | undefined {
  const op = typeof args.operation === "string" ? operations[args.operation as OperationId] : undefined;
  return op?.method ?? (typeof args.method === "string" ? args.method.toLowerCase() : undefined);
}

/** oc_api's arguments (tools/oc_api.ts). */
export interface ApiCallArgs {
  operation?: string;
  method?: string;
  path?: string;
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
  directory?: string;
  max_chars?: number;
}

export async function callApi(args: ApiCallArgs, ctx: ToolContext): Promise<ToolAnswer<{ result: unknown; truncated: boolean } & Json>> {
  const catalog = await catalogFor(ctx);
  const { op, params: fromPath, query: fromPathQuery } = pickOperation(args, catalog);
  if (op.streaming) {
    throw new UsageError(
      `${op.id} is an event stream, which oc_api does not read. To wait for a session's turn use oc_wait (or oc_delegate, which waits by default); oc_result reads a session's state now.`,
    );
  }
  if (op.websocket) {
    throw new UsageError(
      `${op.id} opens a WebSocket (an interactive terminal), which oc_api cannot hold open. Run a command in a session with oc_session action "shell", or open the terminal from an opencode client.`,
    );
  }
  if (op.path.includes("*"))
    throw new UsageError(`${op.id} (${op.path}) has a wildcard path that oc_api cannot fill; read files with operation "file.read" (query: {path}).`);
  if (ctx.config.readOnly && op.method !== "get") {
    throw new UsageError(
      `${op.id} is ${methodOf(op)}, and OPENCODE_CONDUCTOR_READ_ONLY is set: only GET operations run. Unset OPENCODE_CONDUCTOR_READ_ONLY to allow changes.`,
    );
  }
  let query: Json = { ...fromPathQuery, ...args.query };
  if (args.directory !== undefined) query = withDirectory(op, query, args.directory);
  // opencode's spec marks few bodies required, yet it rejects a missing one ("Missing key"): an
  // object body defaults to {}, so its required fields are reported here instead.
  const body = parseBody(op, args.body) ?? (op.body?.type === "object" ? {} : undefined);
  const params = { ...fromPath, ...args.params };
  const long = Object.entries(params).find(([, v]) => typeof v === "string" && v.length > MAX_PARAM_CHARS);
  if (long)
    throw new UsageError(
      `params.${long[0].slice(0, 40)} is ${(long[1] as string).length} characters; a path parameter (an id) has at most ${MAX_PARAM_CHARS}. It began: ${JSON.stringify((long[1] as string).slice(0, 80))}…`,
    );
  // Validation cost grows with the input (Ajv reports every error): a hand-sized call is far below this.
  const measured = measureValues([args.params, query, body], MAX_VALUES);
  if (measured.values > MAX_VALUES) {
    throw new UsageError(
      `${op.id}: params, query and body hold more than ${MAX_VALUES} values together, so nothing was checked or sent. Send less per call (page or split the request).`,
    );
  }
  if (measured.depth > MAX_DEPTH) {
    throw new UsageError(
      `${op.id}: params, query or body nest more than ${MAX_DEPTH} levels deep, so nothing was checked or sent. Send the shape the operation takes (oc_api_ops {operation: "${op.id}"}).`,
    );
  }
  const checked = await checkOffThread(op, { params, query, body }, catalog.key);
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
    data: {
      operation: op.id,
      status: "ok" as const,
      result: shaped.result,
      truncated: shaped.truncated,
      chars: shaped.chars,
      ...(shaped.note ? { note: shaped.note } : {}),
    },
  };
}
