// The tools/list answer, built once from the tool definitions and kept compact: every client pays for
// it in context on every conversation. Same schemas the SDK would list (zod → JSON Schema), minus
// what carries no meaning:
// - `$schema`: MCP's default dialect (2020-12) applies without it;
// - `additionalProperties: {}`, `properties: {}`, `items: {}` and `propertyNames: {type: "string"}`:
//   what JSON Schema assumes anyway;
// - ±2^53-1 bounds zod adds to integers;
// - `execution: {taskSupport: "forbidden"}`: the default when absent;
// - `required` in output schemas: they name the fields to read (always present) and their types; the
//   server checks every answer against the full zod schema before it is sent.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolDef } from "../tool-def.js";

export function toolListing(defs: readonly ToolDef[]): Tool[] {
  return defs.map((def) => ({
    name: def.name,
    title: def.title,
    description: def.description,
    inputSchema: compactSchema(z.object(def.input), "input") as Tool["inputSchema"],
    outputSchema: compactSchema(z.looseObject(def.output), "output") as Tool["outputSchema"],
    annotations: def.annotations,
  }));
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
    if (key === "required" && io === "output") continue;
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
