// Compact rows of a server's other catalogs: agents, skills, commands, MCP servers, providers,
// projects; each engine reads them from its API (engine/v1-catalog.ts, engine/v2-catalog.ts).
import type { CoreContext } from "../context.js";
import { quoted, UsageError } from "../errors.js";
import type { DirectoryOption } from "../context.js";
import { CATALOG_KINDS, type CatalogKind, type CatalogRows } from "../engine/catalog-rows.js";

export type { AgentRow, CatalogKind, CatalogRows, CommandRow, McpRow, ProjectRow, ProviderRow, SkillRow } from "../engine/catalog-rows.js";
export { CATALOG_KINDS } from "../engine/catalog-rows.js";

/** Compact rows of one of opencode's catalogs; `config` is the redacted config object. */
export function catalog<K extends CatalogKind>(ctx: CoreContext, kind: K, options: DirectoryOption = {}): Promise<CatalogRows[K]> {
  if (!CATALOG_KINDS.includes(kind)) return Promise.reject(new UsageError(`Unknown catalog ${quoted(kind)}. Choose one of: ${CATALOG_KINDS.join(", ")}.`));
  return (options.directory === undefined ? ctx.engine : ctx.engine.withDirectory(options.directory)).catalog(kind);
}
