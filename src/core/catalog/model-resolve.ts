// Turns what a person or model types ("sonnet", "fake/backup", "openrouter/x/y#high") into the
// `{providerID, modelID, variant}` opencode needs. Pure, so it is unit-tested on recorded catalogs.
import { quoted, UsageError } from "../errors.js";

export interface ModelRef {
  providerID: string;
  modelID: string;
  variant?: string;
}

/** The part of `GET /config/providers` this needs. */
export interface ProviderCatalog {
  providers: ReadonlyArray<{ id: string; name?: string; models: Record<string, { id: string; name?: string; variants?: Record<string, unknown> }> }>;
  /** providerID → default modelID of that provider. */
  default: Record<string, string>;
}

export class ModelResolutionError extends UsageError {
  override name = "ModelResolutionError";
  constructor(
    message: string,
    readonly candidates: string[] = [],
  ) {
    super(message, "models");
  }
}

export function formatModel(ref: ModelRef): string {
  return `${ref.providerID}/${ref.modelID}${ref.variant ? `#${ref.variant}` : ""}`;
}

/**
 * Resolution order: `provider/model` (model ids may contain `/`), a full id under any provider,
 * then a plain name: exact id or name, then the shortest id containing it. Ties go to the default
 * provider (`defaultProvider`, else the first provider of `catalog.default`); a remaining tie is an error listing
 * the candidates.
 */
export function resolveModel(input: string, catalog: ProviderCatalog, defaultProvider?: string): ModelRef {
  const trimmed = input.trim();
  if (!trimmed) throw new ModelResolutionError("The model name is empty. Give `provider/model` or a model name from the model list.");
  const hash = trimmed.lastIndexOf("#");
  const name = hash > 0 ? trimmed.slice(0, hash) : trimmed;
  const variant = hash > 0 ? trimmed.slice(hash + 1) : undefined;
  const preferred = defaultProvider ?? Object.keys(catalog.default)[0];

  const all = catalog.providers.flatMap((p) =>
    Object.entries(p.models).map(([key, m]) => ({ providerID: p.id, modelID: key, name: m.name ?? m.id, variants: m.variants })),
  );
  const label = (c: { providerID: string; modelID: string }) => `${c.providerID}/${c.modelID}`;

  const pick = (matches: typeof all, how: string): ModelRef => {
    if (matches.length === 1) return withVariant(matches[0]!);
    const inDefault = matches.filter((m) => m.providerID === preferred);
    if (inDefault.length === 1) return withVariant(inDefault[0]!);
    const candidates = matches.map(label).sort();
    throw new ModelResolutionError(`The model name ${quoted(name)} is ambiguous (${how}): ${candidates.join(", ")}. Give one as provider/model.`, candidates);
  };
  const withVariant = (m: (typeof all)[number]): ModelRef => {
    if (variant === undefined) return { providerID: m.providerID, modelID: m.modelID };
    const variants = Object.keys(m.variants ?? {});
    if (variants.length > 0 && !variants.includes(variant)) {
      throw new ModelResolutionError(
        `Model ${label(m)} has no variant ${quoted(variant)}; its variants are: ${variants.join(", ")}.`,
        variants.map((v) => `${label(m)}#${v}`),
      );
    }
    return { providerID: m.providerID, modelID: m.modelID, variant };
  };

  const slash = name.indexOf("/");
  if (slash > 0) {
    const providerID = name.slice(0, slash);
    const modelID = name.slice(slash + 1);
    const provider = catalog.providers.find((p) => p.id === providerID);
    if (provider) {
      const exact = all.find((m) => m.providerID === providerID && m.modelID === modelID);
      if (exact) return withVariant(exact);
      const near = all.filter((m) => m.providerID === providerID && m.modelID.toLowerCase().includes(modelID.toLowerCase()));
      if (near.length > 0)
        return pick(
          near.sort(byLength).filter((m) => m.modelID.length === near[0]!.modelID.length),
          "several models of that provider match",
        );
      const known = all
        .filter((m) => m.providerID === providerID)
        .map(label)
        .slice(0, 20);
      throw new ModelResolutionError(`Provider ${quoted(providerID)} has no model ${quoted(modelID)}. Its models: ${known.join(", ") || "(none)"}.`, known);
    }
    // Not a provider prefix: maybe a model id that itself contains "/" (e.g. an OpenRouter id).
    const byId = all.filter((m) => m.modelID === name);
    if (byId.length > 0) return pick(byId, "the id exists under several providers");
  }

  const lower = name.toLowerCase();
  const exact = all.filter((m) => m.modelID.toLowerCase() === lower || m.name.toLowerCase() === lower);
  if (exact.length > 0) return pick(exact, "several models have that exact name");

  const partial = all.filter((m) => m.modelID.toLowerCase().includes(lower) || m.name.toLowerCase().includes(lower)).sort(byLength);
  if (partial.length > 0) {
    const shortest = partial.filter((m) => m.modelID.length === partial[0]!.modelID.length);
    return pick(shortest, "several models match equally well");
  }
  const connected = catalog.providers.map((p) => p.id).join(", ") || "(none)";
  throw new ModelResolutionError(`No model matches ${quoted(name)} among the connected providers (${connected}). Pick one from the model list.`);
}

function byLength(a: { modelID: string }, b: { modelID: string }): number {
  return a.modelID.length - b.modelID.length || a.modelID.localeCompare(b.modelID);
}
