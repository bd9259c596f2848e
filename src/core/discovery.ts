// What a server offers: its health and version, the models a caller may use (after the allow and
// block globs), and compact rows of its other catalogs. Models come from v1 `config.providers`,
// which blocks until providers are loaded and honours `enabled_providers`; v2 `/api/model` is racy
// (docs/opencode-behaviour.md §3). Everything shown from config and providers is redacted: opencode returns keys verbatim.
import type { CallResult, Schemas } from "../client/types.js";
import type { CoreContext, CoreSettings } from "./context.js";
import { quoted, UsageError } from "./errors.js";
import { formatModel, ModelResolutionError, resolveModel, type ModelRef } from "./model-resolve.js";
import { redact, REDACTED } from "./redact.js";

export interface DirectoryOption {
  /** Project directory to ask about; default: the client's. */
  directory?: string;
}

export type ProviderList = CallResult<"config.providers">;

// ---------------------------------------------------------------------------------------------
// Provider catalog (cached) and model references

const CATALOG_TTL_MS = 10_000;
// Keyed by the event hub: contexts re-scoped to a session's directory share it.
const catalogCache = new WeakMap<object, Map<string, { at: number; value: Promise<ProviderList> }>>();

/**
 * `config.providers` with keys, options and headers redacted, cached per context and directory for
 * 10 s: resolving a model for every delegation must not cost a request (the first one takes ~1 s).
 */
export function getProviderCatalog(ctx: CoreContext, options: DirectoryOption = {}): Promise<ProviderList> {
  let byDirectory = catalogCache.get(ctx.hub);
  if (!byDirectory) catalogCache.set(ctx.hub, (byDirectory = new Map()));
  const key = options.directory ?? ctx.client.directory ?? "";
  const hit = byDirectory.get(key);
  if (hit && Date.now() - hit.at < CATALOG_TTL_MS) return hit.value;
  const value = ctx.client.call("config.providers", {}, { directory: options.directory }).then((list) => ({ ...list, providers: list.providers.map(redactProvider) }));
  const entry = { at: Date.now(), value };
  byDirectory.set(key, entry);
  value.catch(() => {
    if (byDirectory.get(key) === entry) byDirectory.delete(key); // never cache a failure
  });
  return value;
}

// Field by field, so model ids (map keys such as "monkey-1") are never mistaken for secret names.
function redactProvider(provider: Schemas["Provider"]): Schemas["Provider"] {
  const models = Object.fromEntries(
    Object.entries(provider.models).map(([id, model]) => [id, { ...model, options: redact(model.options), headers: redact({ headers: model.headers }).headers }]),
  );
  return { ...provider, ...(provider.key !== undefined ? { key: REDACTED } : {}), options: redact(provider.options), models };
}

/** `*` matches any run of characters, `/` included (model ids may contain `/`); case-insensitive. */
export function globMatches(pattern: string, id: string): boolean {
  const source = pattern
    .trim()
    .split("*")
    .map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`, "i").test(id);
}

/** Why `id` (`provider/model`) may not be used, or undefined when it may. Block wins over allow. */
export function modelRefusal(id: string, settings: CoreSettings): string | undefined {
  const block = (settings.modelBlock ?? []).find((rule) => globMatches(rule, id));
  if (block !== undefined) return `Model ${id} is blocked by the modelBlock rule "${block}" (OPENCODE_CONDUCTOR_MODEL_BLOCK).`;
  const allow = settings.modelAllow ?? [];
  if (allow.length > 0 && !allow.some((rule) => globMatches(rule, id))) {
    return `Model ${id} is not allowed: it matches none of the modelAllow rules (${allow.join(", ")}; OPENCODE_CONDUCTOR_MODEL_ALLOW).`;
  }
  return undefined;
}

/**
 * Resolves what a person typed to a model this conductor may use. Resolution runs on the allowed
 * models first, so a partial name never lands on a blocked one; a name that only a refused model
 * matches is a UsageError naming the rule.
 */
export async function resolveModelRef(ctx: CoreContext, input: string, options: DirectoryOption = {}): Promise<ModelRef> {
  const catalog = await getProviderCatalog(ctx, options);
  const allowed = {
    ...catalog,
    providers: catalog.providers.map((p) => ({ ...p, models: Object.fromEntries(Object.entries(p.models).filter(([id]) => !modelRefusal(`${p.id}/${id}`, ctx.settings))) })),
  };
  try {
    return resolveModel(input, allowed);
  } catch (error) {
    if (!(error instanceof ModelResolutionError)) throw error;
    let ref: ModelRef;
    try {
      ref = resolveModel(input, catalog);
    } catch {
      throw error; // unknown everywhere: the first error lists only usable candidates
    }
    const refusal = modelRefusal(formatModel({ ...ref, variant: undefined }), ctx.settings);
    throw refusal ? new UsageError(`${refusal} List usable models with oc_models.`) : error;
  }
}

// ---------------------------------------------------------------------------------------------
// Models

export interface ModelRow {
  /** `provider/model`, as resolveModelRef and prompts take it. */
  id: string;
  name: string;
  provider: string;
  contextLimit: number;
  outputLimit: number;
  /** USD per million tokens. */
  costIn: number;
  costOut: number;
  variants: string[];
  capabilities: { reasoning: boolean; toolcall: boolean; attachment: boolean; images: boolean };
}

export interface ListModelsOptions extends DirectoryOption {
  /** Case-insensitive substring of the id or the name. */
  search?: string;
  /** Exact provider id. */
  provider?: string;
  /** Only models costing nothing in and out. */
  freeOnly?: boolean;
}

export async function listModels(ctx: CoreContext, options: ListModelsOptions = {}): Promise<ModelRow[]> {
  const catalog = await getProviderCatalog(ctx, options);
  const search = options.search?.trim().toLowerCase();
  const provider = options.provider?.trim().toLowerCase();
  const rows: ModelRow[] = [];
  for (const p of catalog.providers) {
    if (provider && p.id.toLowerCase() !== provider) continue;
    for (const [key, m] of Object.entries(p.models)) {
      const row = modelRow(p.id, key, m);
      if (modelRefusal(row.id, ctx.settings)) continue;
      if (search && !row.id.toLowerCase().includes(search) && !row.name.toLowerCase().includes(search)) continue;
      if (options.freeOnly && (row.costIn !== 0 || row.costOut !== 0)) continue;
      rows.push(row);
    }
  }
  return rows.sort((a, b) => a.id.localeCompare(b.id));
}

function modelRow(providerID: string, key: string, m: Schemas["Model"]): ModelRow {
  return {
    id: `${providerID}/${key}`,
    name: m.name,
    provider: providerID,
    contextLimit: m.limit.context,
    outputLimit: m.limit.output,
    costIn: m.cost.input,
    costOut: m.cost.output,
    variants: Object.keys(m.variants ?? {}),
    capabilities: { reasoning: m.capabilities.reasoning, toolcall: m.capabilities.toolcall, attachment: m.capabilities.attachment, images: m.capabilities.input.image },
  };
}

// ---------------------------------------------------------------------------------------------
// Server status

export interface ServerStatus {
  url: string;
  version: string;
  healthy: boolean;
  /** `provider/model` new work uses: settings.defaultModel, else opencode's configured `model`. */
  defaultModel?: string;
  counts: { providers: number; models: number; agents: number; commands: number };
}

export async function serverStatus(ctx: CoreContext, options: DirectoryOption = {}): Promise<ServerStatus> {
  const opts = { directory: options.directory };
  const [health, providers, config, agents, commands, models] = await Promise.all([
    ctx.client.call("global.health", {}, opts),
    getProviderCatalog(ctx, options),
    ctx.client.call("config.get", {}, opts),
    ctx.client.call("app.agents", {}, opts),
    ctx.client.call("command.list", {}, opts),
    listModels(ctx, options),
  ]);
  return {
    url: ctx.client.url,
    version: health.version,
    healthy: health.healthy,
    defaultModel: defaultModelOf(ctx.settings.defaultModel, config.model, providers),
    counts: { providers: providers.providers.length, models: models.length, agents: agents.length, commands: commands.length },
  };
}

function defaultModelOf(setting: string | undefined, configured: string | undefined, catalog: ProviderList): string | undefined {
  if (setting) {
    try {
      return formatModel(resolveModel(setting, catalog));
    } catch {
      return setting; // shown as given; using it will explain what is wrong
    }
  }
  if (configured) return configured;
  const [provider, model] = Object.entries(catalog.default)[0] ?? [];
  return provider && model ? `${provider}/${model}` : undefined;
}

// ---------------------------------------------------------------------------------------------
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
