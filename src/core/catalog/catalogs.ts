// Compact rows of a server's other catalogs: agents, skills, commands, MCP servers, providers, projects.
import type { Schemas } from "../../client/types.js";
import type { CoreContext } from "../context.js";
import { quoted,UsageError } from "../errors.js";
import { redact } from "./redact.js";
import type { DirectoryOption } from "../context.js";

// Other catalogs

export interface AgentRow {
  name: string;
  mode: "subagent" | "primary" | "all";
  description?: string;
  model?: string;
  native?: boolean;
  hidden?: boolean;
}
export interface SkillRow {
  name: string;
  description?: string;
  location: string;
}
export interface CommandRow {
  name: string;
  description?: string;
  agent?: string;
  model?: string;
  source?: string;
  subtask?: boolean;
}
export interface McpRow {
  name: string;
  status: string;
  error?: string;
}
export interface ProviderRow {
  id: string;
  name: string;
  source: string;
  connected: boolean;
  models: number;
  defaultModel?: string;
  /** Names of the environment variables the provider reads its key from (names, not values). */
  env: string[];
  options: Record<string, unknown>;
}
export interface ProjectRow {
  id: string;
  worktree: string;
  vcs?: string;
  name?: string;
  created: string;
  updated: string;
}

export interface CatalogRows {
  agents: AgentRow[];
  skills: SkillRow[];
  commands: CommandRow[];
  mcp: McpRow[];
  providers: ProviderRow[];
  config: Record<string, unknown>;
  projects: ProjectRow[];
  worktrees: Array<{ path: string }>;
  lsp: Schemas["LSPStatus"][];
  formatters: Schemas["FormatterStatus"][];
  tools: Array<{ id: string }>;
}
export type CatalogKind = keyof CatalogRows;

export const CATALOG_KINDS: readonly CatalogKind[] = ["agents", "skills", "commands", "mcp", "providers", "config", "projects", "worktrees", "lsp", "formatters", "tools"];

type Loaders = { [K in CatalogKind]: (ctx: CoreContext, directory: string | undefined) => Promise<CatalogRows[K]> };

const loaders: Loaders = {
  agents: async (ctx, directory) =>
    (await ctx.client.call("app.agents", {}, { directory })).map((a) => ({
      name: a.name,
      mode: a.mode,
      ...(a.description ? { description: a.description } : {}),
      ...(a.model ? { model: `${a.model.providerID}/${a.model.modelID}` } : {}),
      ...(a.native !== undefined ? { native: a.native } : {}),
      ...(a.hidden ? { hidden: true } : {}),
    })),
  // The skill's full markdown stays out: a list is for choosing, `content` can be pages long.
  skills: async (ctx, directory) =>
    (await ctx.client.call("app.skills", {}, { directory })).map((s) => ({ name: s.name, ...(s.description ? { description: s.description } : {}), location: s.location })),
  commands: async (ctx, directory) =>
    (await ctx.client.call("command.list", {}, { directory })).map((c) => ({
      name: c.name,
      ...(c.description ? { description: c.description } : {}),
      ...(c.agent ? { agent: c.agent } : {}),
      ...(c.model ? { model: c.model } : {}),
      ...(c.source ? { source: c.source } : {}),
      ...(c.subtask ? { subtask: true } : {}),
    })),
  mcp: async (ctx, directory) =>
    Object.entries(await ctx.client.call("mcp.status", {}, { directory })).map(([name, s]) => ({ name, status: s.status, ...("error" in s ? { error: s.error } : {}) })),
  providers: async (ctx, directory) => {
    const list = await ctx.client.call("provider.list", {}, { directory });
    const connected = new Set(list.connected);
    const rows = list.all.map((p) => ({
      id: p.id,
      name: p.name,
      source: p.source,
      connected: connected.has(p.id),
      models: Object.keys(p.models).length,
      ...(list.default[p.id] ? { defaultModel: `${p.id}/${list.default[p.id]}` } : {}),
      env: p.env,
      options: redact(p.options),
    }));
    return rows.sort((a, b) => Number(b.connected) - Number(a.connected) || a.id.localeCompare(b.id));
  },
  config: async (ctx, directory) => redact((await ctx.client.call("config.get", {}, { directory })) as Record<string, unknown>),
  projects: async (ctx, directory) =>
    (await ctx.client.call("project.list", {}, { directory })).map((p) => ({
      id: p.id,
      worktree: p.worktree,
      ...(p.vcs ? { vcs: p.vcs } : {}),
      ...(p.name ? { name: p.name } : {}),
      created: new Date(p.time.created).toISOString(),
      updated: new Date(p.time.updated).toISOString(),
    })),
  worktrees: async (ctx, directory) => (await ctx.client.call("worktree.list", {}, { directory })).map((path) => ({ path })),
  lsp: (ctx, directory) => ctx.client.call("lsp.status", {}, { directory }),
  formatters: (ctx, directory) => ctx.client.call("formatter.status", {}, { directory }),
  tools: async (ctx, directory) => (await ctx.client.call("tool.ids", {}, { directory })).map((id) => ({ id })),
};

/** Compact rows of one of opencode's catalogs; `config` is the redacted config object. */
export function catalog<K extends CatalogKind>(ctx: CoreContext, kind: K, options: DirectoryOption = {}): Promise<CatalogRows[K]> {
  if (!Object.hasOwn(loaders, kind)) return Promise.reject(new UsageError(`Unknown catalog ${quoted(kind)}. Choose one of: ${CATALOG_KINDS.join(", ")}.`));
  return (loaders[kind] as Loaders[K])(ctx, options.directory);
}
