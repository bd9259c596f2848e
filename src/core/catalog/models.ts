// The models a caller may use: the provider catalog (through the engine: on 1.x `config.providers`,
// which blocks until providers are loaded and honours `enabled_providers`, docs/opencode-behaviour.md §3;
// on 2.x `model.list`, engine/v2/v2-catalog.ts),
// the allow and block globs, and model references. Everything shown is redacted: opencode returns keys verbatim.
import type { Provider, ProviderList, ProviderModel } from "../model/catalog.js";
import type { CoreContext, CoreSettings } from "../context.js";
import { UsageError } from "../errors.js";
import { formatModel, ModelResolutionError, resolveModel, type ModelRef } from "./model-resolve.js";
import { cachedRead, CHECK_MAX_AGE_MS, type CachedReadOptions } from "./cached.js";
import { redact, REDACTED } from "./redact.js";
import type { DirectoryOption } from "../context.js";

export type { ProviderList };

// ---------------------------------------------------------------------------------------------
// Provider catalog (cached) and model references

/**
 * `config.providers` with keys, options and headers redacted, cached per context and directory
 * (cached.ts: 10 s for a listing, `read` to choose): resolving a model for every delegation must not
 * cost a request (the first one takes ~1 s).
 */
export function getProviderCatalog(ctx: CoreContext, options: DirectoryOption & { read?: CachedReadOptions } = {}): Promise<ProviderList> {
  const key = `providers ${options.directory ?? ctx.engine.directory ?? ""}`;
  const engine = options.directory === undefined ? ctx.engine : ctx.engine.withDirectory(options.directory);
  return cachedRead(ctx.hub, key, () => engine.providerCatalog().then((list) => ({ ...list, providers: list.providers.map(redactProvider) })), options.read);
}

// Field by field, so model ids (map keys such as "monkey-1") are never mistaken for secret names.
function redactProvider(provider: Provider): Provider {
  const models = Object.fromEntries(
    Object.entries(provider.models).map(([id, model]) => [
      id,
      { ...model, options: redact(model.options), headers: redact({ headers: model.headers }).headers },
    ]),
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
 * matches is a UsageError naming the rule. The catalog may be minutes old (cached.ts); before a name
 * is called unknown, ambiguous or refused, it is resolved again on one at most 10 s old, as oc_models shows.
 */
export async function resolveModelRef(ctx: CoreContext, input: string, options: DirectoryOption = {}): Promise<ModelRef> {
  try {
    return await resolveOn(ctx, input, await getProviderCatalog(ctx, { ...options, read: { maxAgeMs: CHECK_MAX_AGE_MS } }));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return resolveOn(ctx, input, await getProviderCatalog(ctx, options)); // at most 10 s old, as a listing
  }
}

function resolveOn(ctx: CoreContext, input: string, catalog: ProviderList): ModelRef {
  const allowed = {
    ...catalog,
    providers: catalog.providers.map((p) => ({
      ...p,
      models: Object.fromEntries(Object.entries(p.models).filter(([id]) => !modelRefusal(`${p.id}/${id}`, ctx.settings))),
    })),
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
    throw refusal ? new UsageError(`${refusal} Pick one from the usable models.`, "models") : error;
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

/** Longest model search looked at: no model id or name comes near it. */
const MAX_MODEL_SEARCH = 200;

export interface ListModelsOptions extends DirectoryOption {
  /** Case-insensitive substring of the id or the name. */
  search?: string;
  /** Exact provider id. */
  provider?: string;
  /** Only models costing nothing in and out. */
  freeOnly?: boolean;
}

export async function listModels(ctx: CoreContext, options: ListModelsOptions = {}): Promise<ModelRow[]> {
  if (options.search !== undefined && options.search.length > MAX_MODEL_SEARCH)
    throw new UsageError(
      `\`search\` is ${options.search.length.toLocaleString("en")} characters; at most ${MAX_MODEL_SEARCH} are accepted. Search with part of a model's id or name (e.g. "sonnet").`,
    );
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

function modelRow(providerID: string, key: string, m: ProviderModel): ModelRow {
  return {
    id: `${providerID}/${key}`,
    name: m.name,
    provider: providerID,
    contextLimit: m.limit.context,
    outputLimit: m.limit.output,
    costIn: m.cost.input,
    costOut: m.cost.output,
    variants: Object.keys(m.variants ?? {}),
    capabilities: {
      reasoning: m.capabilities.reasoning,
      toolcall: m.capabilities.toolcall,
      attachment: m.capabilities.attachment,
      images: m.capabilities.input.image,
    },
  };
}

// ---------------------------------------------------------------------------------------------
