// The tools/list answer, built once from the tool definitions and kept compact: every client pays for
// it in context on every conversation. Same schemas the SDK would list (zod → JSON Schema), minus
// what carries no meaning:
// - `$schema`: MCP's default dialect (2020-12) applies without it;
// - `additionalProperties: {}`, `properties: {}`, `items: {}` and `propertyNames: {type: "string"}`:
//   what JSON Schema assumes anyway;
// - ±2^53-1 bounds zod adds to integers;
// - `execution: {taskSupport: "forbidden"}`: the default when absent;
// - `required` and `enum` in output schemas: they name the fields to read (always present) and their
//   types; the answer's text says its status in words, and the server checks every answer against
//   the full zod schema (enums included) before it is sent;
// - `title`: a display name for people (tools/list is what a model reads; a client shows the name
//   instead), kept in docs/tools.md and the README's table;
// - annotation hints equal to MCP's defaults (readOnlyHint false, destructiveHint true,
//   idempotentHint false, openWorldHint true), and destructiveHint / idempotentHint on a read-only
//   tool, where the spec gives them no meaning (`clientHints` reads them back as a client does).
import type { Tool } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ToolDef } from "../tool-def.js";

/** A tool's two listed JSON Schemas. */
export type ListedSchemas = Pick<Tool, "inputSchema" | "outputSchema">;

/** What a tool's listing is made of besides its schemas. */
type Listable = Pick<ToolDef, "name" | "description" | "annotations">;

/**
 * The listing of these tools. `schemasOf` gives a tool's JSON Schemas: the server lists the ones
 * converted at build time (built-tools.ts) by `listedSchemas`.
 */
export function toolListing<T extends Listable>(defs: readonly T[], schemasOf: (def: T) => ListedSchemas): Tool[] {
  return defs.map((def) => {
    const { inputSchema, outputSchema } = schemasOf(def);
    return { name: def.name, description: def.description, inputSchema, outputSchema, ...listedHints(def.annotations) };
  });
}

/** A tool's listed JSON Schemas, converted from its zod shapes now. */
export function listedSchemas(def: ToolDef): ListedSchemas {
  return {
    inputSchema: compactSchema(z.object(def.input), "input") as Tool["inputSchema"],
    outputSchema: compactSchema(z.looseObject(def.output), "output") as Tool["outputSchema"],
  };
}

const DEFAULT_HINTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true } as const;
/** Meaningful only when readOnlyHint is false (MCP's ToolAnnotations). */
const WRITE_HINTS: readonly string[] = ["destructiveHint", "idempotentHint"];

/** The hints a client could not infer from MCP's defaults; no `annotations` at all when there are none. */
export function listedHints(hints: ToolDef["annotations"]): { annotations?: Tool["annotations"] } {
  const kept = Object.entries(hints).filter(
    ([hint, value]) => value !== DEFAULT_HINTS[hint as keyof typeof DEFAULT_HINTS] && !(hints.readOnlyHint && WRITE_HINTS.includes(hint)),
  );
  return kept.length > 0 ? { annotations: Object.fromEntries(kept) } : {};
}

/** A listed tool's hints as a client reads them: MCP's defaults for what is absent; no write hints on a read-only tool. */
export function clientHints(annotations: Tool["annotations"]): Partial<ToolDef["annotations"]> {
  const hints: Partial<ToolDef["annotations"]> = { ...DEFAULT_HINTS, ...annotations };
  if (hints.readOnlyHint) for (const hint of WRITE_HINTS) delete hints[hint as keyof typeof hints];
  return hints;
}

export function compactSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  return prune(z.toJSONSchema(schema, { target: "draft-2020-12", io }), io) as Record<string, unknown>;
}

function prune(node: unknown, io: "input" | "output"): unknown {
  if (Array.isArray(node)) return node.map((item) => prune(item, io));
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema") continue;
    if ((key === "required" || key === "enum") && io === "output") continue;
    if ((key === "additionalProperties" || key === "properties" || key === "items") && isEmptyObject(value)) continue;
    if (key === "propertyNames" && isStringType(value)) continue;
    if ((key === "maximum" || key === "minimum") && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) continue;
    // Under `properties` the keys are field names, not keywords: keep every one.
    out[key] = key === "properties" ? Object.fromEntries(Object.entries(value as object).map(([name, s]) => [name, prune(s, io)])) : prune(value, io);
  }
  return out;
}

function isEmptyObject(value: unknown): boolean {
  return !!value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0;
}

function isStringType(value: unknown): boolean {
  return JSON.stringify(value) === '{"type":"string"}';
}
