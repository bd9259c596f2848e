// Permission presets and opencode.json-style rule objects as opencode session rules.
import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/core/errors.js";
import { permissionRules, rulesFromConfig } from "../../../src/core/policy/permissions.js";

describe("rulesFromConfig", () => {
  it("turns opencode.json's permission shape into rules in key order (the last match wins)", () => {
    expect(rulesFromConfig({ "*": "allow", bash: { "*": "ask", "git push*": "deny" }, edit: "deny" })).toEqual([
      { permission: "*", pattern: "*", action: "allow" },
      { permission: "bash", pattern: "*", action: "ask" },
      { permission: "bash", pattern: "git push*", action: "deny" },
      { permission: "edit", pattern: "*", action: "deny" },
    ]);
  });

  it("names the bad entry and shows the expected shape", () => {
    expect(() => rulesFromConfig({ bash: "maybe" })).toThrow(UsageError);
    expect(() => rulesFromConfig({ bash: "maybe" })).toThrow(/"bash" is "maybe".*"allow", "deny", "ask"/);
    expect(() => rulesFromConfig({ bash: { "rm *": "nope" } })).toThrow(/bash → "rm \*" is "nope"/);
    expect(() => rulesFromConfig(["bash"])).toThrow(/must be an object like opencode.json/);
  });

  it("is what permissionRules makes of an object", () => {
    expect(permissionRules({ webfetch: "deny" })).toEqual([{ permission: "webfetch", pattern: "*", action: "deny" }]);
    expect(permissionRules("auto")).toEqual([{ permission: "*", pattern: "*", action: "allow" }]);
    expect(permissionRules(undefined)).toBeUndefined();
  });
});
