// Models and catalogs on opencode 2.x: `model.list` as the core's provider catalogue, and the
// agent, command, skill and provider lists as catalog rows. 2.x's `model.list` and `provider.list`
// carry each provider's `settings` as configured, `apiKey` included (docs/opencode-2x-behaviour.md
// "Sessions"): nothing of `settings` is copied, so no key can reach a caller. `config` is the list
// of config sources 2.x answers (redacted, as 1.x's config); `mcp` and `projects` map 2.x's rows. Catalogs 2.x has no route for say so
// (UnsupportedOnEngineError).
import type { ProviderList } from "../../model/catalog.js";
import type { Schemas } from "../../../client/types.js";
import type { OpencodeV2Client } from "../../../client/v2/client.js";
import { redact } from "../../catalog/redact.js";
import type { CatalogKind, CatalogRows } from "../catalog-rows.js";
import { UnsupportedOnEngineError } from "../engine.js";

interface V2Model {
  id: string;
  modelID?: string;
  providerID: string;
  name?: string;
  capabilities?: { tools?: boolean; reasoning?: boolean; input?: string[]; output?: string[] };
  variants?: Array<string | { id?: string; name?: string }>;
  cost?: unknown;
  limit?: { context?: number; output?: number };
  status?: string;
  enabled?: boolean;
}

interface V2Provider {
  id: string;
  name?: string;
  package?: string;
}

const dataOf = <T>(response: unknown): T[] => (response as { data?: T[] } | undefined)?.data ?? [];

/** The first cost entry's per-million prices, when 2.x lists any (it lists `[]` for free models). */
function costOf(cost: unknown): { input: number; output: number } {
  const first = Array.isArray(cost) ? cost[0] : cost;
  const c = first && typeof first === "object" ? (first as { input?: unknown; output?: unknown }) : {};
  return { input: typeof c.input === "number" ? c.input : 0, output: typeof c.output === "number" ? c.output : 0 };
}

function modelOf(m: V2Model): Schemas["Model"] {
  const input = new Set(m.capabilities?.input ?? ["text"]);
  const cost = costOf(m.cost);
  const variants = Object.fromEntries((m.variants ?? []).map((v) => [typeof v === "string" ? v : (v.id ?? v.name ?? "variant"), {}]));
  return {
    id: m.id,
    providerID: m.providerID,
    name: m.name ?? m.id,
    capabilities: {
      temperature: true,
      reasoning: m.capabilities?.reasoning ?? false,
      attachment: input.has("image") || input.has("pdf"),
      toolcall: m.capabilities?.tools ?? false,
      input: { text: input.has("text"), audio: input.has("audio"), image: input.has("image"), video: input.has("video"), pdf: input.has("pdf") },
      output: { text: true, audio: false, image: false, video: false, pdf: false },
    },
    cost: { input: cost.input, output: cost.output, cache: { read: 0, write: 0 } },
    limit: { context: m.limit?.context ?? 0, output: m.limit?.output ?? 0 },
    status: "active",
    options: {},
    headers: {},
    variants,
  } as unknown as Schemas["Model"];
}

/**
 * Right after the server starts, `model.list` answers `[]` until its providers have loaded (seen on
 * the pre-release: the first call of a fresh server): an empty list is read again, a few times.
 */
const EMPTY_RETRIES = 20;
const EMPTY_RETRY_MS = 250;

async function modelList(client: OpencodeV2Client): Promise<unknown> {
  for (let i = 0; ; i++) {
    const list = await client.request("model.list", {});
    if (dataOf(list).length > 0 || i >= EMPTY_RETRIES) return list;
    await new Promise((resolve) => setTimeout(resolve, EMPTY_RETRY_MS));
  }
}

export async function v2ProviderCatalog(client: OpencodeV2Client): Promise<ProviderList> {
  const [models, providers, preferred] = await Promise.all([
    modelList(client),
    client.request("provider.list", {}),
    client.request("model.default", {}).catch(() => undefined),
  ]);
  const names = new Map(dataOf<V2Provider>(providers).map((p) => [p.id, p.name ?? p.id]));
  const byProvider = new Map<string, Record<string, Schemas["Model"]>>();
  for (const m of dataOf<V2Model>(models)) {
    if (m.enabled === false) continue;
    let list = byProvider.get(m.providerID);
    if (!list) byProvider.set(m.providerID, (list = {}));
    list[m.id] = modelOf(m);
  }
  const list = [...byProvider.entries()].map(
    ([id, models]) => ({ id, name: names.get(id) ?? id, source: "config", env: [], options: {}, models }) as unknown as Schemas["Provider"],
  );
  const fallback = (preferred as { data?: { id?: string; providerID?: string } } | undefined)?.data;
  return { providers: list, default: fallback?.id && fallback.providerID ? { [fallback.providerID]: fallback.id } : {} };
}

type Loaders = { [K in CatalogKind]?: (client: OpencodeV2Client) => Promise<CatalogRows[K]> };

interface V2Project {
  id: string;
  canonical: string;
  vcs?: string;
  name?: string;
  time?: { created?: number; updated?: number };
}

/** The payload of a list route that answers a bare array (config, projects) or `{data}` (the rest). */
const listOf = <T>(response: unknown): T[] => (Array.isArray(response) ? (response as T[]) : dataOf<T>(response));

const iso = (ms: number | undefined) => new Date(ms ?? 0).toISOString();

/** One config source as 2.x lists it: a file it loaded (`info` is its content) or a directory it reads. */
interface V2ConfigEntry {
  type: string;
  path?: string;
  info?: Record<string, unknown>;
}

const loaders: Loaders = {
  agents: async (client) =>
    dataOf<{ id: string; name?: string; description?: string; mode?: string; hidden?: boolean; model?: { id?: string; providerID?: string } }>(
      await client.request("agent.list", {}),
    ).map((a) => ({
      name: a.id,
      mode: a.mode === "subagent" || a.mode === "all" ? a.mode : "primary",
      ...(a.description ? { description: a.description } : {}),
      ...(a.model?.id && a.model.providerID ? { model: `${a.model.providerID}/${a.model.id}` } : {}),
      ...(a.hidden ? { hidden: true } : {}),
    })),
  skills: async (client) =>
    dataOf<{ id: string; name?: string; description?: string; location?: string }>(await client.request("skill.list", {})).map((s) => ({
      name: s.id,
      ...(s.description ? { description: s.description } : {}),
      location: s.location ?? "",
    })),
  commands: async (client) =>
    dataOf<{ name: string; description?: string; agent?: string; model?: string; source?: string }>(await client.request("command.list", {})).map((c) => ({
      name: c.name,
      ...(c.description ? { description: c.description } : {}),
      ...(c.agent ? { agent: c.agent } : {}),
      ...(typeof c.model === "string" ? { model: c.model } : {}),
      ...(c.source ? { source: c.source } : {}),
    })),
  // 2.x answers its config sources in load order (a bare array), not 1.x's one merged object;
  // provider settings in them carry `apiKey`, so everything goes through redact().
  config: async (client) => ({ sources: redact(listOf<V2ConfigEntry>(await client.request("config.get", {}))) }),
  mcp: async (client) =>
    listOf<{ name: string; status?: { status?: string; error?: string } }>(await client.request("mcp.list", {})).map((m) => ({
      name: m.name,
      status: m.status?.status ?? "unknown",
      ...(m.status?.error ? { error: m.status.error } : {}),
    })),
  // 2.x names a project's directory `canonical` (1.x: `worktree`).
  projects: async (client) =>
    listOf<V2Project>(await client.request("project.list", {})).map((p) => ({
      id: p.id,
      worktree: p.canonical,
      ...(p.vcs ? { vcs: p.vcs } : {}),
      ...(p.name ? { name: p.name } : {}),
      created: iso(p.time?.created),
      updated: iso(p.time?.updated ?? p.time?.created),
    })),
  providers: async (client) => {
    const catalog = await v2ProviderCatalog(client);
    return catalog.providers.map((p) => ({
      id: p.id,
      name: p.name,
      source: "config",
      connected: true,
      models: Object.keys(p.models).length,
      ...(catalog.default[p.id] ? { defaultModel: `${p.id}/${catalog.default[p.id]}` } : {}),
      env: [],
      options: {},
    }));
  },
};

export function v2Catalog<K extends CatalogKind>(client: OpencodeV2Client, kind: K): Promise<CatalogRows[K]> {
  const load = loaders[kind] as ((c: OpencodeV2Client) => Promise<CatalogRows[K]>) | undefined;
  if (!load) {
    return Promise.reject(
      new UnsupportedOnEngineError(
        `list its ${kind}`,
        client.identity.version,
        `${kind === "worktrees" ? "the conductor does not read 2.x worktrees (2.0.26 has worktree.list: call it with oc_api where the server has it)" : `2.x has no ${kind} catalog in its API`}; oc_api_ops lists what it has (agents, skills, commands, providers, config, mcp and projects work)`,
      ),
    );
  }
  return PLUGIN_FILLED.has(kind) ? pluginsLoaded(client).then(() => load(client)) : load(client);
}

// 2.x fills its agent, command and skill lists from the location's plugins, which load in the
// background when the location is first used: until then the list routes answer `[]` (a fresh
// server lists no agent and no command). `model.default` waits for that load (up to 5 s, then 503),
// so it is asked first; its answer is not needed (docs/opencode-2x-behaviour.md "Catalogs").
const PLUGIN_FILLED = new Set<CatalogKind>(["agents", "commands", "skills"]);

async function pluginsLoaded(client: OpencodeV2Client): Promise<void> {
  await client.request("model.default", {}).catch(() => undefined);
}
