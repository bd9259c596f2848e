// The guard policy: session rules evaluated the way opencode 1.18.33 does (wildcard match, the last
// matching rule wins, default ask), the config object against the spec's PermissionConfig schema,
// and the credential-free environment.
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { commandPatterns, envRemovalReason, guardConfig, guardedEnv, guardPermissionConfig, guardRules } from "../../../src/core/policy/guard-rails.js";
import type { PermissionRule } from "../../../src/core/policy/permissions.js";

// Copied from the opencode 1.18.33 bundle (Wildcard.match and Permission.evaluate).
function wildcard(text: string, pattern: string): boolean {
  let re = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  if (re.endsWith(" .*")) re = `${re.slice(0, -3)}( .*)?`;
  return new RegExp(`^${re}$`, "s").test(text);
}
function evaluate(permission: string, pattern: string, rules: PermissionRule[]): string {
  return rules.findLast((r) => wildcard(permission, r.permission) && wildcard(pattern, r.pattern))?.action ?? "ask";
}
/** opencode's `fromConfig`: entries in key order; a string means pattern `*`. */
function fromConfig(config: Record<string, string | Record<string, string>>): PermissionRule[] {
  return Object.entries(config).flatMap(([permission, value]) =>
    typeof value === "string"
      ? [{ permission, pattern: "*", action: value as PermissionRule["action"] }]
      : Object.entries(value).map(([pattern, action]) => ({ permission, pattern, action: action as PermissionRule["action"] })),
  );
}
// The build agent's defaults in 1.18.33 (abridged): everything allowed, a few things ask.
const BUILD_DEFAULTS = fromConfig({
  "*": "allow",
  doom_loop: "ask",
  external_directory: { "*": "ask" },
  question: "allow",
  read: { "*": "allow", "*.env": "ask", "*.env.*": "ask", "*.env.example": "allow" },
});

const DENIED = [
  "git push",
  "git push origin main",
  "git push --force-with-lease",
  "sudo git push origin main",
  "GIT_TRACE=1 git push",
  "bash -c 'git push origin main'",
  `sh -c "cd x;git push"`,
  "bash -c 'git push'",
  "/usr/bin/git push",
  "git remote add evil https://example.invalid/x.git",
  "git remote -v",
  "git reset --hard HEAD~1",
  "git reset -q --hard",
  "gh pr create --fill",
  "gh",
  "env GH_HOST=x gh api /user",
  "npm publish",
  "npm publish --access public",
  "pnpm publish",
  "yarn npm publish",
];
const ALLOWED = [
  "git status",
  "grep -r 'ghost' src",
  "git commit -m 'add tests'",
  "git reset --soft HEAD~1",
  "git log --oneline",
  "ghc --version",
  "echo high",
  "npm test",
  "npm install",
  "ls -la",
  "git pushd-helper",
];

describe("guard session rules", () => {
  const rules = guardRules();

  it("starts with * allow and ends with the denials", () => {
    expect(rules[0]).toEqual({ permission: "*", pattern: "*", action: "allow" });
    for (const r of rules) expect(Object.keys(r).sort()).toEqual(["action", "pattern", "permission"]);
    expect(rules.at(-1)).toEqual({ permission: "doom_loop", pattern: "*", action: "deny" });
  });

  it.each(DENIED)("denies bash %j", (command) => {
    expect(evaluate("bash", command, rules)).toBe("deny");
  });
  it.each(ALLOWED)("allows bash %j", (command) => {
    expect(evaluate("bash", command, rules)).toBe("allow");
  });

  it("denies the network tools, questions, mode switches and paths outside the project; never asks", () => {
    const all = [...BUILD_DEFAULTS, ...rules]; // session rules come after the agent's
    for (const tool of ["webfetch", "websearch", "codesearch", "question", "plan_enter", "plan_exit", "doom_loop"])
      expect(evaluate(tool, "*", all)).toBe("deny");
    expect(evaluate("external_directory", "/etc/*", all)).toBe("deny");
    expect(evaluate("read", "/p/.env", all)).toBe("deny");
    expect(evaluate("read", "/p/.env.local", all)).toBe("deny");
    expect(evaluate("read", "/p/.env.example", all)).toBe("allow");
    for (const [tool, pattern] of [
      ["read", "src/a.ts"],
      ["edit", "src/a.ts"],
      ["write", "x"],
      ["task", "general"],
      ["glob", "*"],
      ["skill", "x"],
      ["bash", "make"],
    ]) {
      expect(evaluate(tool!, pattern!, all), `${tool} ${pattern}`).toBe("allow");
    }
  });

  it("keeps opencode's tool-output dir readable when given its data dir", () => {
    const r = guardRules({ opencodeDataDir: "/h/.local/share/opencode/" });
    expect(evaluate("external_directory", "/h/.local/share/opencode/tool-output/*", r)).toBe("allow");
    expect(evaluate("external_directory", "/h/.local/share/opencode/other/*", r)).toBe("deny");
  });

  it("allowAll: false leaves the agent's own allowances (e.g. plan's edit deny) alone", () => {
    const r = guardRules({ allowAll: false });
    expect(r.some((x) => x.permission === "*")).toBe(false);
    const plan = [...fromConfig({ "*": "allow", edit: { "*": "deny" } }), ...r];
    expect(evaluate("edit", "a.ts", plan)).toBe("deny");
    expect(evaluate("bash", "git push", plan)).toBe("deny");
  });

  it("userRules restrict further (readonly) but never lift a denial", () => {
    const r = guardRules({
      userRules: [
        { permission: "edit", pattern: "*", action: "deny" },
        { permission: "bash", pattern: "git push *", action: "allow" },
      ],
    });
    expect(evaluate("edit", "a.ts", r)).toBe("deny");
    expect(evaluate("bash", "git push origin", r)).toBe("deny");
    expect(evaluate("bash", "ls", r)).toBe("allow");
  });

  it("commandPatterns covers the command itself and wrapped forms", () => {
    expect(commandPatterns("gh")).toEqual(expect.arrayContaining(["gh *", "* gh *", "*'gh *", "*/gh *", "*'gh'*"]));
  });
});

describe("guard server config", () => {
  const spec = JSON.parse(readFileSync(new URL("../../../spec/openapi.json", import.meta.url), "utf8"));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ $id: "spec", components: spec.components });
  const validatePermission = ajv.compile({ $ref: "spec#/components/schemas/PermissionConfig" });
  const validateConfig = ajv.compile({ $ref: "spec#/components/schemas/Config" });

  it("is a valid PermissionConfig and a valid Config fragment (spec schema)", () => {
    expect(validatePermission(guardPermissionConfig()), JSON.stringify(validatePermission.errors)).toBe(true);
    expect(validateConfig(guardConfig()), JSON.stringify(validateConfig.errors)).toBe(true);
  });

  it("evaluated after the agent defaults, it denies the same things and asks nothing the defaults did not", () => {
    const all = [...BUILD_DEFAULTS, ...fromConfig(guardPermissionConfig())];
    for (const command of DENIED) expect(evaluate("bash", command, all), command).toBe("deny");
    for (const command of ALLOWED) expect(evaluate("bash", command, all), command).toBe("allow");
    expect(evaluate("webfetch", "https://x", all)).toBe("deny");
    expect(evaluate("external_directory", "/tmp/*", all)).toBe("deny");
    expect(evaluate("doom_loop", "*", all)).toBe("deny");
    expect(evaluate("read", "/p/.env", all)).toBe("deny");
    // No `*` key: an agent's own restrictions (plan: edit deny) survive the config layer.
    expect(Object.keys(guardPermissionConfig())).not.toContain("*");
  });

  it("turns sharing and auto-update off", () => {
    expect(guardConfig()).toMatchObject({ share: "disabled", autoupdate: false });
  });
});

describe("guardedEnv", () => {
  const base = {
    PATH: "/usr/bin",
    HOME: "/home/u",
    LANG: "C.UTF-8",
    GIT_AUTHOR_NAME: "Dev",
    GH_TOKEN: "x",
    GITHUB_TOKEN: "x",
    GITLAB_TOKEN: "x",
    NPM_TOKEN: "x",
    NODE_AUTH_TOKEN: "x",
    AWS_ACCESS_KEY_ID: "x",
    AWS_SECRET_ACCESS_KEY: "x",
    AWS_PROFILE: "x",
    SSH_AUTH_SOCK: "/tmp/agent.sock",
    GIT_ASKPASS: "/bin/askpass",
    OPENCODE_PASSWORD: "x",
    MY_SERVICE_SECRET: "x",
    DB_PASSWORD: "x",
    SOME_PAT: "x",
    OPENAI_API_KEY: "k",
    ANTHROPIC_API_KEY: "k",
    OPENROUTER_API_KEY: "k",
    AZURE_RESOURCE_NAME: "r",
    HF_TOKEN: "k",
    npm_config_registry: "http://127.0.0.1:9/",
  };

  it("removes credentials, keeps provider keys and ordinary variables", () => {
    const env = guardedEnv(base);
    for (const name of [
      "GH_TOKEN",
      "GITHUB_TOKEN",
      "GITLAB_TOKEN",
      "NPM_TOKEN",
      "NODE_AUTH_TOKEN",
      "AWS_ACCESS_KEY_ID",
      "AWS_SECRET_ACCESS_KEY",
      "AWS_PROFILE",
      "SSH_AUTH_SOCK",
      "GIT_ASKPASS",
      "OPENCODE_PASSWORD",
      "MY_SERVICE_SECRET",
      "DB_PASSWORD",
      "SOME_PAT",
    ]) {
      expect(env, name).not.toHaveProperty(name);
    }
    for (const name of [
      "PATH",
      "HOME",
      "LANG",
      "GIT_AUTHOR_NAME",
      "OPENAI_API_KEY",
      "ANTHROPIC_API_KEY",
      "OPENROUTER_API_KEY",
      "AZURE_RESOURCE_NAME",
      "HF_TOKEN",
      "npm_config_registry",
    ]) {
      expect(env[name], name).toBe(base[name as keyof typeof base]);
    }
    expect(base.GH_TOKEN).toBe("x"); // the input is not modified
  });

  it("stops git from prompting, using ssh or any credential helper", () => {
    expect(guardedEnv(base)).toMatchObject({
      GIT_TERMINAL_PROMPT: "0",
      GIT_SSH_COMMAND: "false",
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "credential.helper",
      GIT_CONFIG_VALUE_0: "",
    });
  });

  it("appends the credential reset after the caller's own GIT_CONFIG entries", () => {
    const env = guardedEnv({
      GIT_CONFIG_COUNT: "2",
      GIT_CONFIG_KEY_0: "core.pager",
      GIT_CONFIG_VALUE_0: "cat",
      GIT_CONFIG_KEY_1: "credential.helper",
      GIT_CONFIG_VALUE_1: "store",
    });
    expect(env).toMatchObject({ GIT_CONFIG_COUNT: "3", GIT_CONFIG_KEY_0: "core.pager", GIT_CONFIG_KEY_2: "credential.helper", GIT_CONFIG_VALUE_2: "" });
  });

  it("keeps names the caller asks for (e.g. AWS_* for Bedrock) and says why others go", () => {
    const env = guardedEnv(base, { keep: ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"] });
    expect(env.AWS_ACCESS_KEY_ID).toBe("x");
    expect(env.AWS_PROFILE).toBeUndefined();
    expect(envRemovalReason("GH_TOKEN")).toBe("credential");
    expect(envRemovalReason("DB_PASSWORD")).toBe("looks like a secret");
    expect(envRemovalReason("GIT_AUTHOR_EMAIL")).toBeUndefined();
  });
});
