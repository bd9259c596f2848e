// Discovery against a fake fetch answering with shapes copied from opencode 1.18.33 (docs/opencode-behaviour.md §3,
// and a probe of config.providers / config.get / provider.list with an apiKey and headers set).
import { describe, expect, it } from "vitest";
import { connect } from "../../../src/client/index.js";
import type { CoreContext, CoreSettings } from "../../../src/core/context.js";
import { catalog, CATALOG_KINDS } from "../../../src/core/catalog/catalogs.js";
import { getProviderCatalog, globMatches, listModels, modelRefusal, resolveModelRef } from "../../../src/core/catalog/models.js";
import { serverStatus } from "../../../src/core/catalog/status.js";
import type { EventHub } from "../../../src/core/event-hub.js";
import { UsageError } from "../../../src/core/errors.js";
import { V1Engine } from "../../../src/core/engine/v1.js";
import { redact, REDACTED } from "../../../src/core/catalog/redact.js";

const SECRET = "sk-test-SECRET";

function model(providerID: string, id: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    providerID,
    api: { id, url: "", npm: "@ai-sdk/openai-compatible" },
    name: id[0]!.toUpperCase() + id.slice(1),
    family: "",
    capabilities: {
      temperature: false,
      reasoning: false,
      attachment: false,
      toolcall: true,
      input: { text: true, audio: false, image: false, video: false, pdf: false },
      output: { text: true, audio: false, image: false, video: false, pdf: false },
      interleaved: false,
    },
    cost: { input: 0, output: 0, cache: { read: 0, write: 0 } },
    limit: { context: 0, output: 0 },
    status: "active",
    options: {},
    headers: {},
    release_date: "",
    variants: {},
    ...extra,
  };
}

const fakeProvider = {
  id: "fake",
  name: "Fake",
  source: "config",
  env: [],
  key: SECRET,
  options: { baseURL: "http://127.0.0.1:5801/v1", apiKey: SECRET, chunkTimeout: 2000, headers: { "X-Custom": SECRET } },
  models: { scripted: model("fake", "scripted"), backup: model("fake", "backup", { headers: { "x-extra": SECRET } }) },
};
const paidProvider = {
  id: "paid",
  name: "Paid",
  source: "env",
  env: ["PAID_API_KEY"],
  options: {},
  models: {
    big: model("paid", "big", {
      name: "Big Thinker",
      cost: { input: 3, output: 15, cache: { read: 0, write: 0 } },
      limit: { context: 200000, output: 64000 },
      variants: { high: {}, low: {} },
      capabilities: {
        ...model("paid", "big").capabilities,
        reasoning: true,
        attachment: true,
        input: { text: true, audio: false, image: true, video: false, pdf: true },
      },
    }),
    "small-free": model("paid", "small-free"),
  },
};

const routes: Record<string, unknown> = {
  "GET /global/health": { healthy: true, version: "1.18.33" },
  "GET /config/providers": { providers: [fakeProvider, paidProvider], default: { fake: "scripted", paid: "big" } },
  "GET /provider": {
    all: [paidProvider, fakeProvider, { ...paidProvider, id: "other", name: "Other", models: {} }],
    connected: ["fake", "paid"],
    default: { fake: "scripted" },
  },
  "GET /config": {
    $schema: "https://opencode.ai/config.json",
    model: "fake/scripted",
    keybinds: { leader: "ctrl+x" },
    provider: { fake: { name: "Fake", options: { apiKey: SECRET, baseURL: "http://user:pw@127.0.0.1:5801/v1", headers: { "X-Custom": SECRET } } } },
    mcp: { local: { type: "local", command: ["srv"], environment: { GITHUB_TOKEN: SECRET } } },
  },
  "GET /agent": [
    { name: "build", description: "The default agent.", mode: "primary", native: true, permission: [], options: {} },
    { name: "helper", mode: "subagent", permission: [], options: {}, model: { providerID: "paid", modelID: "big" }, hidden: true, prompt: "long prompt" },
  ],
  "GET /skill": [{ name: "customize-opencode", description: "Use ONLY when…", location: "<built-in>", content: "# very long markdown" }],
  "GET /command": [
    { name: "init", description: "guided AGENTS.md setup", source: "command", template: "Create or update `AGENTS.md`…", hints: ["$ARGUMENTS"] },
  ],
  "GET /mcp": { local: { status: "failed", error: "spawn srv ENOENT" }, remote: { status: "connected" } },
  "GET /project": [{ id: "54722a0e", worktree: "/work/project", vcs: "git", time: { created: 1795973385257, updated: 1795973385257 }, sandboxes: [] }],
  "GET /experimental/worktree": ["/work/project-wt"],
  "GET /lsp": [],
  "GET /formatter": [{ name: "prettier", extensions: [".ts"], enabled: true }],
  "GET /experimental/tool/ids": ["bash", "read", "write"],
};

function fakeContext(settings: CoreSettings = {}) {
  const seen: string[] = [];
  const client = connect({
    url: "http://127.0.0.1:1",
    directory: "/work/project",
    fetch: async (request) => {
      const url = new URL(request.url);
      const key = `${request.method} ${url.pathname}`;
      seen.push(key);
      const body = routes[key];
      if (body === undefined) return Response.json({ name: "UnknownError", data: { message: `no fake route for ${key}` } }, { status: 500 });
      return Response.json(body);
    },
  });
  const ctx: CoreContext = { engine: new V1Engine(client), client, hub: {} as EventHub, settings };
  return { ctx, seen };
}

describe("redact", () => {
  it("replaces strings under secret-named keys and inside headers and environment maps", () => {
    const out = redact({
      apiKey: SECRET,
      key: SECRET,
      nested: { accessToken: SECRET, client_secret: SECRET, password: SECRET, Authorization: `Bearer ${SECRET}`, cookie: SECRET },
      headers: { "X-Anything": SECRET },
      env: { OPENAI: SECRET },
      environment: { ANY: SECRET },
      apiKeys: [SECRET, { value: SECRET }],
      secrets: { a: SECRET },
    });
    expect(JSON.stringify(out)).not.toContain(SECRET);
    expect(out.apiKey).toBe(REDACTED);
    expect(out.headers["X-Anything"]).toBe(REDACTED);
    expect(out.secrets.a).toBe(REDACTED);
  });

  it("keeps what is not secret: names, numbers, booleans, keybinds, other strings", () => {
    const input = {
      env: ["OPENAI_API_KEY"],
      max_tokens: 32000,
      apiKeyRequired: true,
      keybinds: { leader: "ctrl+x" },
      baseURL: "http://127.0.0.1:1/v1",
      apiKey: "",
    };
    expect(redact(input)).toEqual(input);
  });

  it("removes credentials embedded in URLs", () => {
    expect(redact({ baseURL: "https://user:pw@example.invalid/v1" })).toEqual({ baseURL: "https://example.invalid/v1" });
  });

  it("does not change its input", () => {
    const input = { apiKey: SECRET };
    redact(input);
    expect(input.apiKey).toBe(SECRET);
  });
});

describe("model allow and block globs", () => {
  it("matches * across slashes, case-insensitively, and nothing else loosely", () => {
    expect(globMatches("fake/*", "fake/scripted")).toBe(true);
    expect(globMatches("openrouter/*/claude-*", "openrouter/anthropic/claude-sonnet-4")).toBe(true);
    expect(globMatches("*free*", "paid/small-free")).toBe(true);
    expect(globMatches("FAKE/Scripted", "fake/scripted")).toBe(true);
    expect(globMatches("fake/script", "fake/scripted")).toBe(false);
    expect(globMatches("fake.scripted", "fake/scripted")).toBe(false);
  });

  it("lets block win over allow and names the rule", () => {
    const settings = { modelAllow: ["fake/*"], modelBlock: ["fake/back*"] };
    expect(modelRefusal("fake/scripted", settings)).toBeUndefined();
    expect(modelRefusal("fake/backup", settings)).toContain('"fake/back*"');
    expect(modelRefusal("paid/big", settings)).toMatch(/not allowed.*fake\/\*/);
    expect(modelRefusal("paid/big", {})).toBeUndefined();
  });
});

describe("listModels", () => {
  it("returns compact rows from config.providers, sorted by id", async () => {
    const { ctx } = fakeContext();
    const rows = await listModels(ctx);
    expect(rows.map((r) => r.id)).toEqual(["fake/backup", "fake/scripted", "paid/big", "paid/small-free"]);
    expect(rows.find((r) => r.id === "paid/big")).toEqual({
      id: "paid/big",
      name: "Big Thinker",
      provider: "paid",
      contextLimit: 200000,
      outputLimit: 64000,
      costIn: 3,
      costOut: 15,
      variants: ["high", "low"],
      capabilities: { reasoning: true, toolcall: true, attachment: true, images: true },
    });
    expect(JSON.stringify(rows)).not.toContain(SECRET);
  });

  it("filters by search, provider, freeOnly and the allow/block globs", async () => {
    expect((await listModels(fakeContext().ctx, { search: "THINK" })).map((r) => r.id)).toEqual(["paid/big"]);
    expect((await listModels(fakeContext().ctx, { search: "back" })).map((r) => r.id)).toEqual(["fake/backup"]);
    expect((await listModels(fakeContext().ctx, { provider: "paid" })).map((r) => r.id)).toEqual(["paid/big", "paid/small-free"]);
    expect((await listModels(fakeContext().ctx, { freeOnly: true })).map((r) => r.id)).toEqual(["fake/backup", "fake/scripted", "paid/small-free"]);
    const restricted = fakeContext({ modelAllow: ["paid/*", "fake/*"], modelBlock: ["*/backup", "paid/big"] }).ctx;
    expect((await listModels(restricted)).map((r) => r.id)).toEqual(["fake/scripted", "paid/small-free"]);
  });
});

describe("getProviderCatalog", () => {
  it("redacts keys, options and headers but keeps model ids", async () => {
    const { ctx } = fakeContext();
    const list = await getProviderCatalog(ctx);
    expect(JSON.stringify(list)).not.toContain(SECRET);
    const fake = list.providers.find((p) => p.id === "fake")!;
    expect(fake.key).toBe(REDACTED);
    expect(fake.options).toMatchObject({ apiKey: REDACTED, baseURL: "http://127.0.0.1:5801/v1", chunkTimeout: 2000 });
    expect(Object.keys(fake.models)).toEqual(["scripted", "backup"]);
    expect(list.default).toEqual({ fake: "scripted", paid: "big" });
  });

  it("is cached per context (one request for repeated use) but not across contexts", async () => {
    const a = fakeContext();
    await Promise.all([getProviderCatalog(a.ctx), listModels(a.ctx), resolveModelRef(a.ctx, "backup")]);
    await getProviderCatalog(a.ctx);
    expect(a.seen.filter((k) => k === "GET /config/providers")).toHaveLength(1);
    const b = fakeContext();
    await getProviderCatalog(b.ctx);
    expect(b.seen).toEqual(["GET /config/providers"]);
  });
});

describe("resolveModelRef", () => {
  it("resolves names like resolveModel", async () => {
    expect(await resolveModelRef(fakeContext().ctx, "backup")).toEqual({ providerID: "fake", modelID: "backup" });
    expect(await resolveModelRef(fakeContext().ctx, "paid/big#high")).toEqual({ providerID: "paid", modelID: "big", variant: "high" });
  });

  it("refuses a blocked model with a UsageError naming the rule", async () => {
    const { ctx } = fakeContext({ modelBlock: ["paid/*"] });
    const error = await resolveModelRef(ctx, "paid/big").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain('"paid/*"');
  });

  it("refuses a model outside the allow list, and never picks a refused one for a partial name", async () => {
    const allowOnly = fakeContext({ modelAllow: ["fake/scripted"] }).ctx;
    await expect(resolveModelRef(allowOnly, "fake/backup")).rejects.toThrow(/not allowed/);
    // "b" is closest to paid/big; with paid blocked it must land on fake/backup instead of failing.
    expect(await resolveModelRef(fakeContext().ctx, "b")).toEqual({ providerID: "paid", modelID: "big" });
    expect(await resolveModelRef(fakeContext({ modelBlock: ["paid/*"] }).ctx, "b")).toEqual({ providerID: "fake", modelID: "backup" });
    await expect(resolveModelRef(fakeContext().ctx, "nope-model")).rejects.toThrow(/No model matches/);
  });
});

describe("serverStatus", () => {
  it("reports version, health, default model and counts without secrets", async () => {
    const { ctx } = fakeContext({ modelBlock: ["paid/big"] });
    const status = await serverStatus(ctx);
    expect(status).toEqual({
      url: "http://127.0.0.1:1",
      version: "1.18.33",
      engine: "v1",
      healthy: true,
      defaultModel: "fake/scripted",
      counts: { providers: 2, models: 3, agents: 2, commands: 1 },
    });
  });

  it("prefers the conductor's default model setting, resolved to provider/model", async () => {
    expect((await serverStatus(fakeContext({ defaultModel: "Big Thinker" }).ctx)).defaultModel).toBe("paid/big");
  });
});

describe("catalog", () => {
  it("answers every kind", async () => {
    const { ctx } = fakeContext();
    for (const kind of CATALOG_KINDS) await expect(catalog(ctx, kind)).resolves.toBeDefined();
  });

  it("returns compact rows", async () => {
    const { ctx } = fakeContext();
    expect(await catalog(ctx, "agents")).toEqual([
      { name: "build", mode: "primary", description: "The default agent.", native: true },
      { name: "helper", mode: "subagent", model: "paid/big", hidden: true },
    ]);
    expect(await catalog(ctx, "skills")).toEqual([{ name: "customize-opencode", description: "Use ONLY when…", location: "<built-in>" }]);
    expect(await catalog(ctx, "commands")).toEqual([{ name: "init", description: "guided AGENTS.md setup", source: "command" }]);
    expect(await catalog(ctx, "mcp")).toEqual([
      { name: "local", status: "failed", error: "spawn srv ENOENT" },
      { name: "remote", status: "connected" },
    ]);
    expect(await catalog(ctx, "projects")).toEqual([
      { id: "54722a0e", worktree: "/work/project", vcs: "git", created: "2026-11-29T17:29:45.257Z", updated: "2026-11-29T17:29:45.257Z" },
    ]);
    expect(await catalog(ctx, "worktrees")).toEqual([{ path: "/work/project-wt" }]);
    expect(await catalog(ctx, "tools")).toEqual([{ id: "bash" }, { id: "read" }, { id: "write" }]);
    const providers = await catalog(ctx, "providers");
    expect(providers.map((p) => [p.id, p.connected, p.models])).toEqual([
      ["fake", true, 2],
      ["paid", true, 2],
      ["other", false, 0],
    ]);
    expect(providers[1]!.env).toEqual(["PAID_API_KEY"]);
  });

  it("redacts providers and config", async () => {
    const { ctx } = fakeContext();
    const config = await catalog(ctx, "config");
    const text = JSON.stringify([config, await catalog(ctx, "providers")]);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("user:pw");
    expect(config).toMatchObject({ model: "fake/scripted", keybinds: { leader: "ctrl+x" }, mcp: { local: { environment: { GITHUB_TOKEN: REDACTED } } } });
  });

  it("rejects an unknown kind with the list of kinds", async () => {
    await expect(catalog(fakeContext().ctx, "toString" as "agents")).rejects.toThrow(/Choose one of: agents, skills/);
  });
});
