import { z } from "zod";
import { clamped, directoryField } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";

export const ocModels = defineTool({
  name: "oc_models",
  title: "List models",
  description: "Models opencode can use (id, limits, cost, variants); pass an id as model.",
  toolset: "discover",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: {
    search: z.string().optional(),
    provider: z.string().optional(),
    free_only: z.boolean().optional(),
    limit: clamped(1, 500, true).optional(),
    directory: directoryField,
  },
  output: {
    models: z.array(z.unknown()),
  },
  async run(args, ctx) {
    const { listModels } = await import("../../core/catalog/models.js");
    const rows = await listModels(await ctx.conductor(), { search: args.search, provider: args.provider, freeOnly: args.free_only, directory: args.directory });
    const models = rows.slice(0, args.limit ?? 50).map((m) => ({
      id: m.id,
      name: m.name,
      context: m.contextLimit,
      output: m.outputLimit,
      cost_in: m.costIn,
      cost_out: m.costOut,
      variants: m.variants,
      reasoning: m.capabilities.reasoning,
      images: m.capabilities.images,
    }));
    const lines = models.map(
      (m) => `${m.id}  ${m.name}  ctx ${m.context}  $${m.cost_in}/$${m.cost_out}${m.variants.length ? `  variants: ${m.variants.join(",")}` : ""}`,
    );
    const more = rows.length > models.length ? `\n… ${rows.length - models.length} more: narrow with search or provider, or raise limit.` : "";
    return { text: `${rows.length} models${rows.length ? ":\n" : "."}${lines.join("\n")}${more}`, data: { models, total: rows.length } };
  },
});
