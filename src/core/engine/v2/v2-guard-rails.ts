// The guard rails of policy/guard-rails.ts in opencode 2.x's own config, for private instances started
// with a 2.x binary. What differs from 1.x (read from 2.x's config loader; docs/instances.md):
// - Rules are `permissions: [{action, resource, effect}]` (1.x: `permission: {tool: {pattern:
//   action}}`, which 2.x still reads and converts) and the shell tool's action is `shell` (1.x `bash`).
// - 2.x has no OPENCODE_PERMISSION: the config in OPENCODE_CONFIG_CONTENT is the one loaded last
//   (after the user's and the repository's files), so its rules come last and win (the last matching
//   rule decides, as in 1.x).
// - Rules are per agent: every config file's `permissions` are added to every agent, then each
//   agent's own `agents.<id>.permissions` after them, so a repository's agent entry could allow
//   again what the top-level rules deny. The guard is therefore repeated for the built-in agents.
//   An agent only the repository defines keeps its own last word; session rules (the caller's, with
//   the guard around them) are the remaining layer there.
// - The agents' default allowances for opencode's own files (tool and shell output under its data
//   dir) would fall under the external_directory denial: they are allowed again after it.
import { join } from "node:path";
import { commandPatterns, DENIED_COMMANDS, DENIED_TOOLS } from "../../policy/guard-rails.js";
import type { PermissionRule } from "../../policy/permissions.js";

export interface PermissionRuleV2 {
  action: string;
  resource: string;
  effect: "allow" | "deny" | "ask";
}

/** The built-in agents of 2.x (pre-release b622626 and 2.0.26 alike) that do real work. */
export const GUARDED_AGENTS_V2 = ["build", "plan", "general", "explore"];

/** The guard as 2.x rules: only denials (and re-allowing opencode's own output files). */
export function guardRulesV2(options: { opencodeDataDir?: string } = {}): PermissionRuleV2[] {
  const rule = (action: string, resource: string, effect: PermissionRuleV2["effect"]): PermissionRuleV2 => ({ action, resource, effect });
  const data = options.opencodeDataDir?.replace(/\/+$/, "");
  return [
    rule("read", "*.env", "deny"),
    rule("read", "*.env.*", "deny"),
    rule("read", "*.env.example", "allow"),
    ...DENIED_COMMANDS.flatMap(commandPatterns).map((p) => rule("shell", p, "deny")),
    rule("external_directory", "*", "deny"),
    ...(data ? [rule("external_directory", join(data, "tool-output", "*"), "allow"), rule("external_directory", join(data, "shell", "*", "*"), "allow")] : []),
    ...DENIED_TOOLS.map((t) => rule(t, "*", "deny")),
  ];
}

/** Config fragment for a guarded 2.x server: the rules at the top and per built-in agent, nothing shared or updated. */
export function guardConfigV2(options: { opencodeDataDir?: string } = {}): Record<string, unknown> {
  return { ...perAgent(guardRulesV2(options)), share: "disabled", autoupdate: false };
}

/** 1.x session rules as 2.x rules (`{action, resource, effect}`; 1.x `bash` is 2.x `shell`). */
export function rulesV2(rules: PermissionRule[]): PermissionRuleV2[] {
  return rules.map((r) => ({ action: r.permission === "bash" ? "shell" : r.permission, resource: r.pattern, effect: r.action }));
}

/**
 * A task's own rules as 2.x config, for a server that runs that task alone (a worktree's): at the
 * top and per built-in agent, as the guard (an agent's own rules come after the top-level ones).
 */
export function rulesConfigV2(rules: PermissionRule[]): Record<string, unknown> {
  return perAgent(rulesV2(rules));
}

function perAgent(permissions: PermissionRuleV2[]): Record<string, unknown> {
  return { permissions, agents: Object.fromEntries(GUARDED_AGENTS_V2.map((id) => [id, { permissions }])) };
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * `config` (the caller's own inline config) with the guard applied last: rule lists are appended
 * to (the guard's rules after the caller's, so they win), anything else the guard sets replaces.
 */
export function withGuardV2(config: Json, guard: Json): Json {
  const out: Json = { ...config };
  for (const [key, value] of Object.entries(guard)) {
    const current = out[key];
    if (key === "permissions" && Array.isArray(value)) out[key] = [...(Array.isArray(current) ? current : []), ...value];
    else if (isObject(value) && isObject(current)) out[key] = withGuardV2(current, value);
    else out[key] = value;
  }
  return out;
}
