// One row of the operation table from one operation of a spec: flags and standalone JSON Schemas
// (refs bundled into $defs). Used by codegen for generated/operations.ts and, at run time, by
// oc_api / oc_api_ops for the connected server's own spec. No ts-morph here: it ships in dist.
import { parametersSchema, requestBodySchema, schemaSummary, type JsonSchema, type OpenApiDocument, type SpecOperation } from "./spec.js";

export const HTTP_METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** One row of the table, as plain data (what operations.ts holds for that operation). */
export interface OperationRow {
  id: string;
  method: string;
  path: string;
  summary: string;
  description: string;
  tags: string[];
  readOnly: boolean;
  streaming: boolean;
  websocket: boolean;
  pathParams: JsonSchema | null;
  query: JsonSchema | null;
  body: JsonSchema | null;
  bodyRequired: boolean;
  responses: { status: string; description: string; contentType: string | null; schema: string | null }[];
}

/** opencode documents its WebSocket routes (pty.connect, v2.pty.connect) only in prose. */
export function opensWebSocket(op: Pick<SpecOperation, "method" | "description" | "summary">): boolean {
  return op.method === "get" && /\bWebSocket connection\b/i.test(`${op.summary} ${op.description}`);
}

/** The fields that need no schema work: enough to list, search and route operations. */
export type OperationHead = Pick<OperationRow, "id" | "method" | "path" | "summary" | "description" | "tags" | "readOnly" | "streaming" | "websocket">;

export function operationHead(op: SpecOperation): OperationHead {
  return {
    id: op.id,
    method: op.method,
    path: op.path,
    summary: op.summary,
    description: op.description,
    tags: op.tags,
    readOnly: op.method === "get",
    streaming: op.responses.some((r) => r.status.startsWith("2") && r.content.some((m) => m.contentType.startsWith("text/event-stream"))),
    websocket: opensWebSocket(op),
  };
}

export function operationRow(spec: OpenApiDocument, op: SpecOperation): OperationRow {
  if (!(HTTP_METHODS as readonly string[]).includes(op.method)) {
    throw new Error(`${op.id} uses ${op.method.toUpperCase()}, which HttpMethod does not include: extend it first`);
  }
  const body = requestBodySchema(spec, op);
  return {
    ...operationHead(op),
    pathParams: parametersSchema(spec, op, "path"),
    query: parametersSchema(spec, op, "query"),
    body,
    bodyRequired: body !== null && op.requestBody?.required === true,
    responses: op.responses.map((r) => {
      // One content type per response in practice; JSON wins when there are several.
      const media = r.content.find((m) => m.contentType === "application/json") ?? r.content[0];
      return {
        status: r.status,
        description: r.description,
        contentType: media?.contentType ?? null,
        schema: media?.schema ? schemaSummary(media.schema) : null,
      };
    }),
  };
}
