// The guard rails in 2.x's config shape (the real server resolving them: test/e2e-v2/instances.test.ts).
import { describe, expect, it } from "vitest";
import { DENIED_TOOLS } from "../../../src/core/policy/guard-rails.js";
import { guardConfigV2, guardRulesV2, GUARDED_AGENTS_V2, rulesConfigV2, withGuardV2 } from "../../../src/core/engine/v2/v2-guard-rails.js";
import { instanceEnvironment } from "../../../src/core/instances/environment.js";
import { permissionRules } from "../../../src/core/policy/permissions.js";

describe("guardRulesV2", () => {
  const rules = guardRulesV2({ opencodeDataDir: "/data/opencode/" });

  it("denies the publishing commands under 2.x's `shell` action (1.x: bash)", () => {
    expect(rules).toContainEqual({ action: "shell", resource: "git push *", effect: "deny" });
    expect(rules).toContainEqual({ action: "shell", resource: "gh *", effect: "deny" });
    expect(rules.some((r) => r.action === "bash")).toBe(false);
  });

  it("denies other directories, then allows opencode's own tool and shell output files again", () => {
    const external = rules.filter((r) => r.action === "external_directory");
    expect(external).toEqual([
      { action: "external_directory", resource: "*", effect: "deny" },
      { action: "external_directory", resource: "/data/opencode/tool-output/*", effect: "allow" },
      { action: "external_directory", resource: "/data/opencode/shell/*/*", effect: "allow" },
    ]);
  });

  it("turns the network tools and questions off entirely, and never allows everything", () => {
    for (const tool of DENIED_TOOLS) expect(rules).toContainEqual({ action: tool, resource: "*", effect: "deny" });
    expect(rules.some((r) => r.action === "*")).toBe(false);
  });
});

describe("guardConfigV2 and withGuardV2", () => {
  it("repeats the rules for each built-in agent", () => {
    const config = guardConfigV2();
    expect(Object.keys(config.agents as object)).toEqual(GUARDED_AGENTS_V2);
    expect(config).toMatchObject({ share: "disabled", autoupdate: false, permissions: guardRulesV2() });
  });

  it("appends the guard's rules after the caller's (the last match wins) and keeps the caller's other settings", () => {
    const user = {
      model: "fake/scripted",
      permissions: [{ action: "shell", resource: "*", effect: "allow" }],
      agents: { build: { model: "fake/other", permissions: [{ action: "*", resource: "*", effect: "allow" }] }, mine: { permissions: [] } },
      share: "auto",
    };
    const merged = withGuardV2(user, guardConfigV2());
    const guard = guardRulesV2();
    expect(merged.model).toBe("fake/scripted");
    expect(merged.share).toBe("disabled");
    expect(merged.permissions).toEqual([...user.permissions, ...guard]);
    const agents = merged.agents as Record<string, { model?: string; permissions: unknown[] }>;
    expect(agents.build).toEqual({ model: "fake/other", permissions: [{ action: "*", resource: "*", effect: "allow" }, ...guard] });
    expect(agents.mine).toEqual({ permissions: [] });
    expect(agents.plan).toEqual({ permissions: guard });
  });
});

describe("a task's own rules in a 2.x server's config (a worktree's server, for the one task it runs)", () => {
  const readonly = permissionRules("readonly")!;

  it("are 2.x rules at the top and per built-in agent; 1.x bash is 2.x shell", () => {
    const config = rulesConfigV2(readonly);
    expect(config.permissions).toContainEqual({ action: "*", resource: "*", effect: "allow" });
    expect(config.permissions).toContainEqual({ action: "edit", resource: "*", effect: "deny" });
    expect(config.permissions).toContainEqual({ action: "shell", resource: "*", effect: "deny" });
    expect(Object.keys(config.agents as object)).toEqual(GUARDED_AGENTS_V2);
  });

  it("come after the caller's inline config and before the guard, so the guard still wins", async () => {
    const env = { PATH: "/bin", HOME: "/h", OPENCODE_CONFIG_CONTENT: JSON.stringify({ permissions: [{ action: "read", resource: "*", effect: "allow" }] }) };
    const out = await instanceEnvironment({ env }, "/p", 2, readonly);
    const config = JSON.parse(out.OPENCODE_CONFIG_CONTENT!) as { permissions: unknown[]; agents: Record<string, { permissions: unknown[] }> };
    const guard = guardRulesV2({ opencodeDataDir: "/h/.local/share/opencode" });
    const task = rulesConfigV2(readonly).permissions as unknown[];
    expect(config.permissions).toEqual([{ action: "read", resource: "*", effect: "allow" }, ...task, ...guard]);
    expect(config.agents.build!.permissions).toEqual([...task, ...guard]);
  });

  it("are not put in the config of a 1.x server (its sessions take rules)", async () => {
    const out = await instanceEnvironment({ env: { PATH: "/bin", HOME: "/h" } }, "/p", 1, readonly);
    expect(JSON.parse(out.OPENCODE_CONFIG_CONTENT!).permissions).toBeUndefined();
  });
});
