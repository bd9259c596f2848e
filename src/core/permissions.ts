// Permission presets for delegated sessions, as opencode session rules (`{permission, pattern, action}`;
// the last matching rule wins, and session rules come after the agent's).
import type { Schemas } from "../client/types.js";
import { UsageError } from "./errors.js";

export type PermissionRule = Schemas["PermissionRule"];
export type PermissionPreset = "auto" | "readonly" | "agent";
export type Permissions = PermissionPreset | PermissionRule[];

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
    if (!rules) throw new UsageError(`Unknown permissions preset "${permissions}". Use auto, readonly, agent, or a list of {permission, pattern, action} rules.`);
    return rules;
  }
  for (const [i, rule] of permissions.entries()) {
    if (!rule || typeof rule.permission !== "string" || typeof rule.pattern !== "string" || !["allow", "deny", "ask"].includes(rule.action)) {
      throw new UsageError(`Permission rule ${i} is invalid: expected {permission: string, pattern: string, action: "allow" | "deny" | "ask"}.`);
    }
  }
  return permissions;
}
