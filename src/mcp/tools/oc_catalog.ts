import { z } from "zod";
import { catalog, CATALOG_KINDS } from "../../core/catalog/catalogs.js";
import { directoryField } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";

const MAX_TEXT = 6_000;

export const ocCatalog = defineTool({
  name: "oc_catalog",
  title: "Browse catalog",
  description: "What the server offers of one kind (config with secrets redacted).",
  toolset: "discover",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: { kind: z.enum(CATALOG_KINDS as unknown as [string, ...string[]]), directory: directoryField },
  output: { items: z.unknown() },
  async run(args, ctx) {
    const items = await catalog(await ctx.conductor(), args.kind as (typeof CATALOG_KINDS)[number], { directory: args.directory });
    const json = JSON.stringify(items, null, 1);
    const count = Array.isArray(items) ? `${items.length} ${args.kind}` : args.kind;
    const text = `${count}:\n${json.length > MAX_TEXT ? `${json.slice(0, MAX_TEXT)}\n… (truncated; the structured result has the rest, or a link to it when over the answer budget)` : json}`;
    return { text, data: { kind: args.kind, items } };
  },
});
