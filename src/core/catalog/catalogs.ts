// Compact rows of a server's other catalogs: agents, skills, commands, MCP servers, providers,
// projects; each engine reads them from its API (engine/v1/v1-catalog.ts, engine/v2/v2-catalog.ts).
import type { CoreContext } from "../context.js";
import { quoted, UsageError } from "../errors.js";
import type { DirectoryOption } from "../context.js";
import { CATALOG_KINDS, type CatalogKind, type CatalogRows } from "../engine/catalog-rows.js";
import { cachedRead, CHECK_MAX_AGE_MS } from "./cached.js";

export type { AgentRow, CatalogKind, CatalogRows, CommandRow, McpRow, ProjectRow, ProviderRow, SkillRow } from "../engine/catalog-rows.js";
export { CATALOG_KINDS } from "../engine/catalog-rows.js";

/** Compact rows of one of opencode's catalogs; `config` is the redacted config object. */
export function catalog<K extends CatalogKind>(ctx: CoreContext, kind: K, options: DirectoryOption = {}): Promise<CatalogRows[K]> {
  if (!CATALOG_KINDS.includes(kind)) return Promise.reject(new UsageError(`Unknown catalog ${quoted(kind)}. Choose one of: ${CATALOG_KINDS.join(", ")}.`));
  return (options.directory === undefined ? ctx.engine : ctx.engine.withDirectory(options.directory)).catalog(kind);
}

/**
 * The first of `names` that `kind` (agents or commands) lacks, with the catalog's rows to name the
 * choices; undefined when it has them all. Read from a cache up to 5 minutes old (cached.ts), and
 * read again before saying a name is missing (it may have been added since).
 */
export async function missingName(
  ctx: CoreContext,
  kind: "agents" | "commands",
  names: string[],
): Promise<{ name: string; rows: Array<{ name: string }> } | undefined> {
  const key = `${kind} ${ctx.engine.directory ?? ""}`;
  const read = () => ctx.engine.catalog(kind) as Promise<Array<{ name: string }>>;
  for (const fresh of [false, true]) {
    const rows = await cachedRead(ctx.hub, key, read, fresh ? { fresh } : { maxAgeMs: CHECK_MAX_AGE_MS });
    const name = names.find((n) => !rows.some((row) => row.name === n));
    if (name === undefined) return undefined;
    if (fresh) return { name, rows };
  }
  return undefined;
}
