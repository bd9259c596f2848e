// The connected server at a glance: health, version, default model and catalog counts.
import type { CoreContext } from "../context.js";
import { formatModel,resolveModel } from "./model-resolve.js";
import { getProviderCatalog,listModels,type ProviderList } from "./models.js";
import type { DirectoryOption } from "../context.js";

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
