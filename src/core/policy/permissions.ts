// Permission presets for delegated sessions, as opencode session rules (`{permission, pattern, action}`;
// the last matching rule wins, and session rules come after the agent's).
import type { PermissionRule } from "../model/permission-rule.js";
import { quoted, UsageError } from "../errors.js";

export type { PermissionRule };
export type PermissionPreset = "auto" | "readonly" | "agent";
type Action = PermissionRule["action"];
/** opencode.json's `permission` shape: `{"bash": {"git push*": "deny", "*": "ask"}, "edit": "allow"}`. */
export type PermissionConfig = Record<string, Action | Record<string, Action>>;
export type Permissions = PermissionPreset | PermissionRule[] | PermissionConfig;

const WRITE_TOOLS = ["edit", "write", "patch", "apply_patch", "multiedit", "bash"];

const PRESETS: Record<PermissionPreset, PermissionRule[]> = {
  /** Everything allowed: nothing will stop to ask. */
  auto: [{ permission: "*", pattern: "*", action: "allow" }],
  /** Read and search freely; no edits, no shell. */
  readonly: [{ permission: "*", pattern: "*", action: "allow" }, ...WRITE_TOOLS.map((permission) => ({ permission, pattern: "*", action: "deny" as const }))],
  /** The agent's own rules; an `ask` blocks the turn until answered (oc_pending / oc_answer). */
  agent: [],
};

/** The rules to set on the session, or undefined to leave the session's rules alone. */
export function permissionRules(permissions: Permissions | undefined): PermissionRule[] | undefined {
  if (permissions === undefined) return undefined;
  if (typeof permissions === "string") {
    const rules = PRESETS[permissions];
    if (!rules)
      throw new UsageError(`Unknown permissions preset ${quoted(permissions)}. Use auto, readonly, agent, or a list of {permission, pattern, action} rules.`);
    return rules;
  }
  if (!Array.isArray(permissions)) return rulesFromConfig(permissions);
  for (const [i, rule] of permissions.entries()) {
    if (!rule || typeof rule.permission !== "string" || typeof rule.pattern !== "string" || !["allow", "deny", "ask"].includes(rule.action)) {
      throw new UsageError(`Permission rule ${i} is invalid: expected {permission: string, pattern: string, action: "allow" | "deny" | "ask"}.`);
    }
  }
  return permissions;
}

const ACTIONS: readonly unknown[] = ["allow", "deny", "ask"] satisfies Action[];
const isAction = (value: unknown): value is Action => ACTIONS.includes(value);

/** An opencode.json-style `permission` object as session rules, in key order (so the last match wins, as in opencode). */
export function rulesFromConfig(config: unknown): PermissionRule[] {
  const example = '{"bash": {"git push*": "deny"}, "edit": "allow"}';
  if (!config || typeof config !== "object" || Array.isArray(config))
    throw new UsageError(`Permission rules must be an object like opencode.json's "permission", e.g. ${example}.`);
  const rules: PermissionRule[] = [];
  for (const [permission, value] of Object.entries(config)) {
    if (isAction(value)) {
      rules.push({ permission, pattern: "*", action: value });
    } else if (value && typeof value === "object" && !Array.isArray(value)) {
      for (const [pattern, action] of Object.entries(value)) {
        if (!isAction(action)) throw new UsageError(`Permission rule ${permission} → ${quoted(pattern)} is ${quoted(action)}: use "allow", "deny" or "ask".`);
        rules.push({ permission, pattern, action });
      }
    } else {
      throw new UsageError(
        `Permission rule ${quoted(permission)} is ${quoted(value)}: use "allow", "deny", "ask", or an object of pattern → action, e.g. ${example}.`,
      );
    }
  }
  return rules;
}
