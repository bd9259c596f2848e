// oc_api_ops's search and lookup (tools/oc_api_ops.ts holds its definition and loads this on its
// first call): the catalogue of opencode's HTTP operations, the connected server's own when its spec
// differs from the pin, else the pinned table (catalog.ts). The lookups it shares with oc_api are in
// operation-search.ts and schema-text.ts.
import type { ToolAnswer, ToolContext } from "../tool-def.js";
import { catalogFor, type ApiHead, type ApiOperation } from "./catalog.js";
import { accessOf, methodOf, oneLine, MAX_SEARCH, tooLong, resolveOperation, searchOperations, unknownOperation, groupOf } from "./operation-search.js";
import { shapeOf } from "./schema-text.js";

interface RowT {
  id: string;
  method: string;
  path: string;
  summary: string;
  access: "read" | "write";
}

type JsonSchemaOrNull = Record<string, unknown> | null;

interface DetailT extends RowT {
  description: string;
  /** An event stream: oc_api refuses it (use oc_wait / oc_delegate). */
  streaming: boolean;
  /** Opens a WebSocket (a terminal): oc_api refuses it. */
  websocket: boolean;
  /** JSON Schema of the path parameters (oc_api `params`), the query (`query`) and the JSON body (`body`). */
  path_params: JsonSchemaOrNull;
  query: JsonSchemaOrNull;
  body: JsonSchemaOrNull;
  body_required: boolean;
  responses: Array<{ status: string; description: string; schema: string | null }>;
}

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
  const lines = [
    `${op.id}  ${methodOf(op)} ${op.path}  [${accessOf(op)}]${op.streaming ? " [event stream: not callable with oc_api]" : ""}${op.websocket ? " [WebSocket: not callable with oc_api]" : ""}`,
    op.summary,
  ];
  if (op.description && op.description !== op.summary) lines.push(op.description);
  if (op.pathParams) lines.push(`params (path): ${shapeOf(op.pathParams)}`);
  if (op.query) lines.push(`query: ${shapeOf(op.query)}`);
  if (op.body) lines.push(`body${op.bodyRequired ? " (required)" : ""}: ${shapeOf(op.body)}`);
  lines.push(`responses: ${op.responses.map((r) => `${r.status} ${r.schema ?? r.description}`).join(", ")}`);
  lines.push("(* = required)");
  if (op.body) lines.push(`body JSON Schema: ${JSON.stringify(op.body)}`);
  return lines.join("\n");
}

/** oc_api_ops's arguments (tools/oc_api_ops.ts). */
export interface FindOperationsArgs {
  search?: string;
  operation?: string;
  limit?: number;
}

export async function findOperations(args: FindOperationsArgs, ctx: ToolContext): Promise<ToolAnswer<{ operations: unknown[] } & Record<string, unknown>>> {
  if (args.search !== undefined && args.search.length > MAX_SEARCH)
    throw tooLong("search", args.search, MAX_SEARCH, 'Search with a few words, e.g. "session messages".');
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
    lines.push(
      hits.length === 0
        ? `No operation of ${source} matches "${search}". Try fewer or other words, or call oc_api_ops with no arguments for the index.`
        : `${hits.length} operations match "${search}"${hits.length > limit ? ` (showing ${limit}; raise limit or add words)` : ""}:`,
    );
  } else {
    const groups = new Map<string, number>();
    for (const op of catalog.heads) groups.set(groupOf(op), (groups.get(groupOf(op)) ?? 0) + 1);
    lines.push(`${catalog.heads.length} operations of ${source} in ${groups.size} groups: ${[...groups].map(([g, n]) => `${g} (${n})`).join(", ")}.`);
    lines.push(`First ${rows.length}; search by words (e.g. search: "session messages") to find the rest:`);
  }
  lines.push(...rowLines(rows));
  if (rows.length > 0) lines.push('Full input of one: oc_api_ops {operation: "<id>"}; call it with oc_api.');
  return { text: lines.join("\n"), data: { total: hits.length, operations: rows, source: catalog.source, version: catalog.version } };
}
