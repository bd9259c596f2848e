// One permission rule as opencode applies it to a session: the last matching rule wins.

export interface PermissionRule {
  /** The tool or permission: `bash`, `edit`, `*`, … */
  permission: string;
  /** What it applies to: a command or path glob. */
  pattern: string;
  action: "allow" | "deny" | "ask";
}
