// The process-wide worktree tasks of the MCP server: one registry and one reaper per state dir,
// shared by the main conductor and the conductors of its private instances.
import type { Config } from "../../config.js";
import { Worktrees } from "./worktrees.js";

let shared: { stateDir: string; worktrees: Worktrees } | undefined;

export function sharedWorktrees(config: Pick<Config, "stateDir" | "worktreeTtlS">): Worktrees {
  if (!shared || shared.stateDir !== config.stateDir)
    shared = { stateDir: config.stateDir, worktrees: new Worktrees({ stateDir: config.stateDir, ttlS: config.worktreeTtlS }) };
  return shared.worktrees;
}
