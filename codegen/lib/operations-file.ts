// Renders generated/operations.ts: the operation table the client and the MCP tools read
// (id, method, path, flags, standalone JSON Schemas for path/query/body, response summaries).
// Built with ts-morph structures; JSON values go through writeJson.
import { IndentationText, NewLineKind, Project, QuoteKind, StructureKind, VariableDeclarationKind } from "ts-morph";
import type { InterfaceDeclarationStructure, OptionalKind, PropertySignatureStructure } from "ts-morph";
import { writeJson } from "./json-writer.js";
import {
  compareStrings,
  parametersSchema,
  requestBodySchema,
  schemaSummary,
  type JsonSchema,
  type OpenApiDocument,
  type SpecOperation,
} from "./spec.js";

export const HTTP_METHODS = ["get", "post", "put", "patch", "delete"] as const;

export interface SpecInfo {
  title: string;
  version: string;
  opencodeVersion: string;
  sha256: string;
  operationCount: number;
}

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

export function operationRow(spec: OpenApiDocument, op: SpecOperation): OperationRow {
  if (!(HTTP_METHODS as readonly string[]).includes(op.method)) {
    throw new Error(`${op.id} uses ${op.method.toUpperCase()}, which HttpMethod does not include: extend it first`);
  }
  const body = requestBodySchema(spec, op);
  return {
    id: op.id,
    method: op.method,
    path: op.path,
    summary: op.summary,
    description: op.description,
    tags: op.tags,
    readOnly: op.method === "get",
    streaming: op.responses.some(
      (r) => r.status.startsWith("2") && r.content.some((m) => m.contentType.startsWith("text/event-stream")),
    ),
    websocket: opensWebSocket(op),
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

const prop = (name: string, type: string, docs?: string): OptionalKind<PropertySignatureStructure> => ({
  name,
  type,
  docs: docs ? [docs] : [],
});

const responseInterface: InterfaceDeclarationStructure = {
  kind: StructureKind.Interface,
  name: "OperationResponse",
  isExported: true,
  properties: [
    prop("status", "string", 'HTTP status as written in the spec: "200", "404", "default".'),
    prop("description", "string"),
    prop("contentType", "string | null"),
    prop("schema", "string | null", 'Short name of the body schema, e.g. "Session[]" or "boolean".'),
  ],
};

const specInterface: InterfaceDeclarationStructure = {
  kind: StructureKind.Interface,
  name: "OperationSpec",
  isExported: true,
  properties: [
    prop("id", "OperationId"),
    prop("method", "HttpMethod"),
    prop("path", "string"),
    prop("summary", "string"),
    prop("description", "string"),
    prop("tags", "readonly string[]"),
    prop("readOnly", "boolean", "True for GET."),
    prop("streaming", "boolean", "Some 2xx response is text/event-stream."),
    prop("websocket", "boolean", "A GET that upgrades to a WebSocket (said only in its description: the spec has no other marker)."),
    prop("pathParams", "JsonSchema | null", "Object schema of the path parameters, refs bundled into $defs."),
    prop("query", "JsonSchema | null", "Object schema of the query parameters (null when none), refs bundled."),
    prop("body", "JsonSchema | null", "application/json request body schema, refs bundled; null when none."),
    prop("bodyRequired", "boolean"),
    prop("responses", "readonly OperationResponse[]"),
  ],
};

export function renderOperationsFile(rows: OperationRow[], info: SpecInfo, specName: string): string {
  const project = new Project({
    useInMemoryFileSystem: true,
    manipulationSettings: {
      indentationText: IndentationText.TwoSpaces,
      newLineKind: NewLineKind.LineFeed,
      quoteKind: QuoteKind.Double,
    },
  });
  const file = project.createSourceFile("operations.ts");
  file.addImportDeclaration({
    leadingTrivia: `// DO NOT EDIT. Generated by \`npm run codegen\` from ${specName} (sha256 ${info.sha256}).\n`,
    isTypeOnly: true,
    moduleSpecifier: "./openapi.js",
    namedImports: [{ name: "operations", alias: "OperationTypes" }],
  });
  file.addTypeAlias({ isExported: true, name: "OperationId", type: "keyof OperationTypes" });
  file.addTypeAlias({
    isExported: true,
    name: "HttpMethod",
    type: HTTP_METHODS.map((m) => JSON.stringify(m)).join(" | "),
  });
  file.addTypeAlias({ isExported: true, name: "JsonSchema", type: "{ [key: string]: unknown }" });
  file.addInterfaces([responseInterface, specInterface]);
  const sorted = [...rows].sort((a, b) => compareStrings(a.id, b.id));
  file.addVariableStatement({
    isExported: true,
    declarationKind: VariableDeclarationKind.Const,
    docs: ["Every operation of the spec, keyed by operationId (sorted)."],
    declarations: [
      {
        name: "operations",
        type: "Readonly<Record<OperationId, OperationSpec>>",
        initializer: (writer) => writeJson(writer, Object.fromEntries(sorted.map((row) => [row.id, row]))),
      },
    ],
  });
  file.addVariableStatement({
    isExported: true,
    declarationKind: VariableDeclarationKind.Const,
    leadingTrivia: (writer) => writer.blankLine(),
    declarations: [
      {
        name: "specInfo",
        initializer: (writer) => {
          writeJson(writer, info);
          writer.write(" as const");
        },
      },
    ],
  });
  // ts-morph prints initializers with a hanging indent; one formatting pass with fixed settings
  // (and the pinned TypeScript) gives the usual layout, the same on every run.
  file.formatText({ indentSize: 2, tabSize: 2, convertTabsToSpaces: true, newLineCharacter: "\n" });
  return file.getFullText();
}
