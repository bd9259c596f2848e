// The v1 engine's catalogs: compact rows of opencode 1.x's agents, skills, commands, MCP servers,
// providers, projects and the rest, each from its v1 route (secrets redacted).
import type { OpencodeClient } from "../../../client/connect.js";
import { redact } from "../../catalog/redact.js";
import type { CatalogKind, CatalogRows } from "../catalog-rows.js";

type Loaders = { [K in CatalogKind]: (client: OpencodeClient) => Promise<CatalogRows[K]> };

const loaders: Loaders = {
  agents: async (client) =>
    (await client.call("app.agents")).map((a) => ({
      name: a.name,
      mode: a.mode,
      ...(a.description ? { description: a.description } : {}),
      ...(a.model ? { model: `${a.model.providerID}/${a.model.modelID}` } : {}),
      ...(a.native !== undefined ? { native: a.native } : {}),
      ...(a.hidden ? { hidden: true } : {}),
    })),
  // The skill's full markdown stays out: a list is for choosing, `content` can be pages long.
  skills: async (client) =>
    (await client.call("app.skills")).map((s) => ({ name: s.name, ...(s.description ? { description: s.description } : {}), location: s.location })),
  commands: async (client) =>
    (await client.call("command.list")).map((c) => ({
      name: c.name,
      ...(c.description ? { description: c.description } : {}),
      ...(c.agent ? { agent: c.agent } : {}),
      ...(c.model ? { model: c.model } : {}),
      ...(c.source ? { source: c.source } : {}),
      ...(c.subtask ? { subtask: true } : {}),
    })),
  mcp: async (client) =>
    Object.entries(await client.call("mcp.status")).map(([name, s]) => ({ name, status: s.status, ...("error" in s ? { error: s.error } : {}) })),
  providers: async (client) => {
    const list = await client.call("provider.list");
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
  config: async (client) => redact((await client.call("config.get")) as Record<string, unknown>),
  projects: async (client) =>
    (await client.call("project.list")).map((p) => ({
      id: p.id,
      worktree: p.worktree,
      ...(p.vcs ? { vcs: p.vcs } : {}),
      ...(p.name ? { name: p.name } : {}),
      created: new Date(p.time.created).toISOString(),
      updated: new Date(p.time.updated).toISOString(),
    })),
  worktrees: async (client) => (await client.call("worktree.list")).map((path) => ({ path })),
  lsp: (client) => client.call("lsp.status"),
  formatters: (client) => client.call("formatter.status"),
  tools: async (client) => (await client.call("tool.ids")).map((id) => ({ id })),
};

export function v1Catalog<K extends CatalogKind>(client: OpencodeClient, kind: K): Promise<CatalogRows[K]> {
  return (loaders[kind] as Loaders[K])(client);
}
