// Discovery on the fake opencode replaying the "discovery" recording (`npm run record -- discovery`):
// opencode 1.18.33's own catalogs for a config with a second provider (costs, limits, variants),
// a subagent, a failing MCP server, and a fake key in the provider options, headers and MCP
// environment, so redaction is tested on what opencode really answers.
import { describe, expect, it, vi } from "vitest";
import type { CoreContext, CoreSettings } from "../../../src/core/context.js";
import { catalog, CATALOG_KINDS } from "../../../src/core/catalog/catalogs.js";
import { getProviderCatalog, globMatches, listModels, modelRefusal, resolveModelRef } from "../../../src/core/catalog/models.js";
import { serverStatus } from "../../../src/core/catalog/status.js";
import type { EventHub } from "../../../src/core/event-hub.js";
import { UsageError } from "../../../src/core/errors.js";
import { V1Engine } from "../../../src/core/engine/v1/v1-engine.js";
import { redact, REDACTED } from "../../../src/core/catalog/redact.js";
import { DISCOVERY_SECRET as SECRET } from "../../support/recording/scenarios.js";
import { useReplay } from "../../support/replay.js";

// How often each function reads is the code's business; repeated reads get opencode's last answer.
const replay = useReplay("discovery", { repeatReads: true });

/** What opencode answered to `path` in the recording. */
const recorded = (path: string) => replay.fixture.interactions.find((i) => i.path === path)!.body as any;

function fakeContext(settings: CoreSettings = {}) {
  const { client, seen: requests } = replay.connectSeen();
  const ctx: CoreContext = { engine: new V1Engine(client), hub: {} as EventHub, settings };
  return {
    ctx,
    get seen() {
      return requests.map((r) => `${r.method} ${r.path}`);
    },
  };
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

describe("the recording", () => {
  it("holds the fake key where opencode put it (so the redaction tests below test something)", () => {
    for (const path of ["/config/providers", "/provider", "/config"]) expect(JSON.stringify(recorded(path))).toContain(SECRET);
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
      // opencode gives a reasoning model low/medium/high; the configured high and low merge into them.
      variants: ["low", "medium", "high"],
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
    expect(JSON.stringify(list)).not.toContain("user:pw");
    const fake = list.providers.find((p) => p.id === "fake")!;
    expect(fake.options).toMatchObject({ apiKey: REDACTED, baseURL: "http://127.0.0.1:5801/v1", chunkTimeout: 2000, headers: { "X-Custom": REDACTED } });
    expect(fake.models.backup!.headers).toEqual({ "x-extra": REDACTED });
    expect(Object.keys(fake.models)).toEqual(["scripted", "backup"]);
    expect(list.providers.find((p) => p.id === "paid")!.options).toMatchObject({ apiKey: REDACTED, baseURL: "http://paid.invalid/v1" });
    expect(list.default).toEqual(recorded("/config/providers").default);
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

  // A delegation's model check takes a catalog minutes old (one read per server, not one every 10 s
  // under a steady load), a listing at most 10 s old, and a name the old catalog lacks is looked up
  // again on one at most 10 s old before it is refused.
  it("takes a catalog minutes old for a known name, and looks again on a younger one before refusing one", async () => {
    const fake = fakeContext();
    const ctx = fake.ctx;
    const reads = () => fake.seen.filter((k) => k === "GET /config/providers").length;
    const start = Date.now();
    const clock = vi.spyOn(Date, "now").mockReturnValue(start);
    try {
      await resolveModelRef(ctx, "backup");
      clock.mockReturnValue(start + 60_000);
      expect(await resolveModelRef(ctx, "backup")).toEqual({ providerID: "fake", modelID: "backup" });
      expect(reads()).toBe(1);
      await expect(resolveModelRef(ctx, "nope-model")).rejects.toThrow(/No model matches/);
      expect(reads()).toBe(2);
      clock.mockReturnValue(start + 60_000 + 11_000);
      await listModels(ctx);
      expect(reads()).toBe(3);
      clock.mockReturnValue(start + 60_000 + 11_000 + 301_000);
      await resolveModelRef(ctx, "backup");
      expect(reads()).toBe(4);
    } finally {
      clock.mockRestore();
    }
  });
});

describe("serverStatus", () => {
  it("reports version, health, default model and counts without secrets", async () => {
    const { ctx } = fakeContext({ modelBlock: ["paid/big"] });
    const status = await serverStatus(ctx);
    expect(status).toEqual({
      url: replay.baseUrl,
      version: "1.18.33",
      engine: "v1",
      healthy: true,
      defaultModel: "fake/scripted",
      counts: { providers: 2, models: 3, agents: recorded("/agent").length, commands: recorded("/command").length },
    });
    expect(JSON.stringify(status)).not.toContain(SECRET);
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
    const agents = await catalog(ctx, "agents");
    expect(agents.map((a) => a.name)).toEqual(recorded("/agent").map((a: { name: string }) => a.name));
    expect(agents.find((a) => a.name === "build")).toEqual({
      name: "build",
      mode: "primary",
      description: "The default agent. Executes tools based on configured permissions.",
      native: true,
    });
    expect(agents.find((a) => a.name === "helper")).toEqual({
      name: "helper",
      mode: "subagent",
      description: "Helps.",
      native: false,
      model: "paid/big",
      hidden: true,
    });
    expect(JSON.stringify(agents)).not.toContain("long prompt");
    const skills = await catalog(ctx, "skills");
    expect(skills.map((s) => [s.name, s.location])).toEqual([["customize-opencode", "<built-in>"]]);
    expect(Object.keys(skills[0]!).sort()).toEqual(["description", "location", "name"]);
    expect((await catalog(ctx, "commands")).find((c) => c.name === "init")).toEqual({ name: "init", description: "guided AGENTS.md setup", source: "command" });
    expect(await catalog(ctx, "mcp")).toEqual([{ name: "local", status: "failed", error: 'Executable not found in $PATH: "occ-no-such-mcp-server"' }]);
    // The temp project is no git repository: opencode files it under its "global" project.
    expect(await catalog(ctx, "projects")).toEqual([{ id: "global", worktree: "/", created: "2026-01-01T00:00:00.054Z", updated: "2026-01-01T00:00:00.054Z" }]);
    expect(await catalog(ctx, "worktrees")).toEqual([]);
    expect(await catalog(ctx, "tools")).toEqual(recorded("/experimental/tool/ids").map((id: string) => ({ id })));
    const providers = await catalog(ctx, "providers");
    expect(providers.map((p) => [p.id, p.connected, p.models])).toEqual([
      ["fake", true, 2],
      ["paid", true, 2],
    ]);
    expect(providers[1]!.env).toEqual(["PAID_API_KEY"]);
  });

  it("redacts providers and config", async () => {
    const { ctx } = fakeContext();
    const config = await catalog(ctx, "config");
    const text = JSON.stringify([config, await catalog(ctx, "providers")]);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("user:pw");
    expect(config).toMatchObject({
      model: "fake/scripted",
      agent: { helper: { model: "paid/big" } },
      provider: { fake: { options: { apiKey: REDACTED, headers: { "X-Custom": REDACTED } } } },
      mcp: { local: { environment: { GITHUB_TOKEN: REDACTED } } },
    });
  });

  it("rejects an unknown kind with the list of kinds", async () => {
    await expect(catalog(fakeContext().ctx, "toString" as "agents")).rejects.toThrow(/Choose one of: agents, skills/);
  });
});
