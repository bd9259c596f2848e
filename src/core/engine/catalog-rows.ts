// The rows of the server catalogs (agents, skills, commands, …) as the core and the tools show
// them, whichever engine read them (catalog/catalogs.ts lists them; each engine fills them).
import type { Schemas } from "../../client/types.js";

export interface AgentRow {
  name: string;
  mode: "subagent" | "primary" | "all";
  description?: string;
  model?: string;
  native?: boolean;
  hidden?: boolean;
}
export interface SkillRow {
  name: string;
  description?: string;
  location: string;
}
export interface CommandRow {
  name: string;
  description?: string;
  agent?: string;
  model?: string;
  source?: string;
  subtask?: boolean;
}
export interface McpRow {
  name: string;
  status: string;
  error?: string;
}
export interface ProviderRow {
  id: string;
  name: string;
  source: string;
  connected: boolean;
  models: number;
  defaultModel?: string;
  /** Names of the environment variables the provider reads its key from (names, not values). */
  env: string[];
  options: Record<string, unknown>;
}
export interface ProjectRow {
  id: string;
  worktree: string;
  vcs?: string;
  name?: string;
  created: string;
  updated: string;
}

export interface CatalogRows {
  agents: AgentRow[];
  skills: SkillRow[];
  commands: CommandRow[];
  mcp: McpRow[];
  providers: ProviderRow[];
  config: Record<string, unknown>;
  projects: ProjectRow[];
  worktrees: Array<{ path: string }>;
  lsp: Schemas["LSPStatus"][];
  formatters: Schemas["FormatterStatus"][];
  tools: Array<{ id: string }>;
}
export type CatalogKind = keyof CatalogRows;

export const CATALOG_KINDS: readonly CatalogKind[] = [
  "agents",
  "skills",
  "commands",
  "mcp",
  "providers",
  "config",
  "projects",
  "worktrees",
  "lsp",
  "formatters",
  "tools",
];
