// What `install` changes for each client: where its MCP configuration and its context live, per
// scope (user: the client's files in HOME; project: files in the project folder), and the entry.
// The entries are those docs/clients.md shows.
import { join } from "node:path";
import type { Edit } from "./edits.js";
import type { Launch } from "./launch-command.js";
import { cursorRule, skillBody, skillSource, SKILL_NAME } from "./skill.js";

export const CLIENTS = ["claude", "codex", "gemini", "cursor", "opencode"] as const;
export type Client = (typeof CLIENTS)[number];
export type Scope = "user" | "project";

export interface Places {
  home: string;
  /** opencode's config folder: $XDG_CONFIG_HOME/opencode, default ~/.config/opencode. */
  xdgConfig: string;
  project: string;
}

export interface Target {
  edits: Edit[];
  /** Said to the user after the install: how to check it, and anything it cannot do. */
  notes: string[];
}

const SERVER = "opencode";

/** `env`: variables the server gets (e.g. OPENCODE_URL): clients pass few or none of their own on. */
export function targetFor(client: Client, scope: Scope, launch: Launch, places: Places, env: Record<string, string> = {}): Target {
  const base = scope === "user" ? places.home : places.project;
  const secret = Object.keys(env).length > 0;
  const withEnv = secret ? { env } : {};
  const stdio = { command: launch.command, args: launch.args, ...withEnv };
  const context = (path: string): Edit => ({ kind: "block", path, body: skillBody(skillSource()) });
  switch (client) {
    case "claude":
      return {
        edits: [
          {
            kind: "json",
            path: scope === "user" ? join(places.home, ".claude.json") : join(places.project, ".mcp.json"),
            key: ["mcpServers", SERVER],
            value: { type: "stdio", ...stdio, env },
            secret,
          },
          { kind: "file", path: join(base, ".claude", "skills", SKILL_NAME, "SKILL.md"), text: skillSource() },
        ],
        notes: ["Check it with `claude mcp list`; the skill shows in `/skills`."],
      };
    case "codex": {
      if (scope === "project")
        throw new Error(
          "Codex reads MCP servers from ~/.codex/config.toml only: use --scope user (the context can still go in the project's AGENTS.md by hand).",
        );
      return {
        edits: [
          {
            kind: "toml",
            path: join(places.home, ".codex", "config.toml"),
            key: ["mcp_servers", SERVER],
            value: { command: launch.command, args: launch.args, ...withEnv, tool_timeout_sec: 900, default_tools_approval_mode: "approve" },
            comment: ['default_tools_approval_mode = "approve": codex exec has nobody to ask, and without it refuses every call of these tools.'],
            secret,
          },
          context(join(places.home, ".codex", "AGENTS.md")),
        ],
        notes: ["Check it with `codex mcp list`. For `codex exec`, tools need approval: see docs/clients.md."],
      };
    }
    case "gemini":
      return {
        edits: [
          // trust: as `gemini mcp add --trust` does; without it `gemini -p` offers no MCP tool.
          {
            kind: "json",
            path: join(base, ".gemini", "settings.json"),
            key: ["mcpServers", SERVER],
            value: { ...stdio, timeout: 900_000, trust: true },
            secret,
          },
          context(scope === "user" ? join(places.home, ".gemini", "GEMINI.md") : join(places.project, "GEMINI.md")),
        ],
        notes: ["Check it with `gemini mcp list`. Headless `gemini -p` calls MCP tools only when trusted: see docs/clients.md."],
      };
    case "cursor":
      return {
        edits: [
          { kind: "json", path: join(base, ".cursor", "mcp.json"), key: ["mcpServers", SERVER], value: stdio, secret },
          ...(scope === "project" ? [{ kind: "file" as const, path: join(places.project, ".cursor", "rules", `${SKILL_NAME}.mdc`), text: cursorRule() }] : []),
        ],
        notes: scope === "user" ? ["Cursor keeps user rules in its settings, not in files: install with --scope project to add the delegation rule."] : [],
      };
    case "opencode":
      return {
        edits: [
          {
            kind: "json",
            path: scope === "user" ? join(places.xdgConfig, "opencode.json") : join(places.project, "opencode.json"),
            key: ["mcp", "conductor"],
            value: { type: "local", command: [launch.command, ...launch.args], enabled: true, ...(secret ? { environment: env } : {}) },
            secret,
          },
          context(scope === "user" ? join(places.xdgConfig, "AGENTS.md") : join(places.project, "AGENTS.md")),
        ],
        notes: ["opencode lists the tools as conductor_oc_delegate, conductor_oc_wait, …"],
      };
  }
}
