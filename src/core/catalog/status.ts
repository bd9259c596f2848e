// The connected server at a glance: health, version, default model and catalog counts.
import type { CoreContext } from "../context.js";
import { formatModel, resolveModel } from "./model-resolve.js";
import { getProviderCatalog, listModels, type ProviderList } from "./models.js";
import type { DirectoryOption } from "../context.js";

// Server status

export interface ServerStatus {
  url: string;
  version: string;
  /** Which engine speaks to it: `v1` (opencode 1.x) or `v2` (opencode 2.x). */
  engine: "v1" | "v2";
  healthy: boolean;
  /** `provider/model` new work uses: settings.defaultModel, else opencode's configured `model`. */
  defaultModel?: string;
  counts: { providers: number; models: number; agents: number; commands: number };
}

export async function serverStatus(ctx: CoreContext, options: DirectoryOption = {}): Promise<ServerStatus> {
  const engine = options.directory === undefined ? ctx.engine : ctx.engine.withDirectory(options.directory);
  const [health, info, providers, configured, agents, commands, models] = await Promise.all([
    engine.health(),
    engine.info(),
    getProviderCatalog(ctx, options),
    engine.configuredModel(),
    engine.catalog("agents"),
    engine.catalog("commands"),
    listModels(ctx, options),
  ]);
  return {
    url: engine.url,
    version: health.version,
    engine: info.kind,
    healthy: health.healthy,
    defaultModel: defaultModelOf(ctx.settings.defaultModel, configured, providers),
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
