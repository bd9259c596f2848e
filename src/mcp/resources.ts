// MCP resources for clients that read context instead of calling tools: each opencode session's
// transcript, diff and todo list under `opencode://session/{session_id}/…` (the transcripts of
// recent sessions are listed), and the audit trail as `opencode://audit`. Each comes with the
// toolset that shows the same data (`sessions`; `audit`, which is opt-in). Read-only, scrubbed of
// secrets like every tool answer; they add nothing to tools/list.
import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import type { Config } from "../config.js";
import { readAudit } from "../core/governance/audit.js";
import type { Conductor } from "../core/conductor.js";
import { UsageError } from "../core/errors.js";
import { listSessions } from "../core/sessions/rows.js";
import { sessionDiff } from "../core/sessions/diff.js";
import { sessionMessages } from "../core/sessions/messages.js";
import { sessionTodo } from "../core/sessions/actions.js";
import { registerResourceUpdates } from "./resource-updates.js";
import { scrub } from "./register-tool.js";

export interface ResourceOptions {
  config: Config;
  conductor(sessionId?: string): Promise<Conductor>;
  secrets(): string[];
}

/** Sessions listed as resources (newest first): enough to pick from, not the whole history. */
const LISTED_SESSIONS = 20;
const AUDIT_ENTRIES = 200;

const VIEWS = {
  transcript: {
    title: "transcript",
    description: "The session's messages (newest 100) as opencode stores them",
    read: (c: Conductor, id: string) => sessionMessages(c, id, { limit: 100 }),
  },
  diff: { title: "diff", description: "Files the session changed, with patches (git projects)", read: (c: Conductor, id: string) => sessionDiff(c, id) },
  todo: { title: "todo list", description: "The agent's todo list for the session", read: (c: Conductor, id: string) => sessionTodo(c, id) },
} as const;

type Json = (uri: URL, value: unknown) => ReadResourceResult;

export function registerResources(server: McpServer, o: ResourceOptions): void {
  const json: Json = (uri, value) => ({
    contents: [{ uri: uri.href, mimeType: "application/json", text: scrub(JSON.stringify(value, null, 2), o.secrets()) }],
  });
  if (o.config.toolsets.includes("sessions")) {
    registerSessionViews(server, o, json);
    registerResourceUpdates(server, o.conductor);
  }
  if (o.config.toolsets.includes("audit")) {
    server.registerResource(
      "audit",
      "opencode://audit",
      { title: "Audit trail", description: `The last ${AUDIT_ENTRIES} audit entries (oldest first)`, mimeType: "application/json" },
      async (uri) => {
        if (!o.config.auditPath) return json(uri, { audit: "off", entries: [] });
        return json(uri, await readAudit(o.config.auditPath, { limit: AUDIT_ENTRIES }));
      },
    );
  }
}

function registerSessionViews(server: McpServer, o: ResourceOptions, json: Json): void {
  for (const [view, v] of Object.entries(VIEWS)) {
    const template = new ResourceTemplate(`opencode://session/{session_id}/${view}`, {
      // Only the transcripts are listed; diff and todo are reached through the template.
      list:
        view === "transcript"
          ? async () => {
              const rows = await listSessions(await o.conductor(), { limit: LISTED_SESSIONS });
              return {
                resources: rows.map((r) => ({
                  uri: `opencode://session/${r.id}/transcript`,
                  name: `${r.title} (transcript)`,
                  mimeType: "application/json",
                  description: `${r.directory} · updated ${r.updated}`,
                })),
              };
            }
          : undefined,
    });
    server.registerResource(
      `session-${view}`,
      template,
      { title: `Session ${v.title}`, description: v.description, mimeType: "application/json" },
      async (uri, variables) => {
        const id = String(variables.session_id ?? "");
        if (!/^ses_[A-Za-z0-9]+$/.test(id)) throw new UsageError(`${uri.href.slice(0, 200)}: expected opencode://session/ses_…/${view}`);
        return json(uri, await v.read(await o.conductor(id), id));
      },
    );
  }
}
