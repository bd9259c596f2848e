// Registers one of this package's tools from what the build wrote of it (listing/built-tools.ts),
// without loading its module: the tool's definition (its zod shapes, its run, the core it calls)
// and the call machinery (register-tool.ts) load on its first call, so that a start answers
// `initialize` and `tools/list` without them (docs/performance.md, "Start-up"). Every call is
// still checked by the SDK against the full zod input schema before it runs, and every answer
// against the full output schema, exactly as registerTool's are: the schemas handed to the SDK
// are Standard Schemas that build the same `z.looseObject(shape)` on first use and pass each
// check to it.
import type { McpServer, RegisteredTool, StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { BuiltTool } from "./listing/built-tools.js";
import type { RegisterOptions, ToolHandler } from "./register-tool.js";
import type { ToolDef } from "./tool-def.js";

let loading: Promise<Map<string, ToolDef>> | undefined;
let loaded: Map<string, ToolDef> | undefined;

/** Every tool's definition by name, loaded once per process (tools/index.ts). */
function definitions(): Promise<Map<string, ToolDef>> {
  loading ??= import("./tools/index.js").then(({ ALL_TOOLS }) => (loaded = new Map(ALL_TOOLS.map((def) => [def.name, def]))));
  return loading;
}

async function definitionOf(name: string): Promise<ToolDef> {
  const def = (await definitions()).get(name);
  if (!def) throw new Error(`${name} is in built-tools.json but not in tools/index.ts: run npm run build`);
  return def;
}

type Io = "input" | "output";

/**
 * The tool's `z.looseObject` of one side as a Standard Schema whose zod schema is built on first
 * use (as registerTool builds it at registration). `validate` loads the definition first; the JSON
 * Schema conversions are synchronous: once loaded they are the zod schema's own, as the SDK would
 * convert it; before (the HTTP entry reads the input side ahead of a call for `x-mcp-header`
 * declarations) they are what tools/list advertises.
 */
type ObjectSchema = StandardSchemaWithJSON<Record<string, unknown>, Record<string, unknown>>;

function lazySchema(tool: BuiltTool, io: Io): ObjectSchema {
  let built: z.ZodType | undefined;
  const zod = (def: ToolDef) => (built ??= z.looseObject(io === "input" ? def.input : def.output));
  const now = () => {
    const def = loaded?.get(tool.name);
    return def ? zod(def)["~standard"] : undefined;
  };
  const listed = (): Record<string, unknown> => (io === "input" ? tool.inputSchema : (tool.outputSchema ?? {}));
  return {
    "~standard": {
      version: 1,
      vendor: "zod",
      validate: async (value: unknown) => zod(await definitionOf(tool.name))["~standard"].validate(value),
      jsonSchema: {
        input: (options) => now()?.jsonSchema.input(options) ?? listed(),
        output: (options) => now()?.jsonSchema.output(options) ?? listed(),
      },
    },
  } as ObjectSchema;
}

/** registerTool (register-tool.ts) of a tool that loads on its first call. */
export function registerLazyTool(server: McpServer, tool: BuiltTool, options: RegisterOptions): RegisteredTool {
  let handler: Promise<ToolHandler> | undefined;
  const load = () =>
    (handler ??= Promise.all([definitionOf(tool.name), import("./register-tool.js")]).then(([def, { toolHandler }]) => toolHandler(server, def, options)));
  return server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema: lazySchema(tool, "input"),
      outputSchema: lazySchema(tool, "output"),
      annotations: tool.annotations,
    },
    async (args, request) => (await load())(args, request),
  );
}
