// MCP resources for clients that read context instead of calling tools: each opencode session's
// transcript, diff and todo list under `opencode://session/{session_id}/…` (the transcripts of
// recent sessions are listed, from what recent-sessions.ts keeps: a listing never waits on
// opencode), a worktree task's whole patch (`…/patch`), and the audit trail as `opencode://audit`.
// Each comes with the toolset that shows the same data (`sessions`; `audit`, which is opt-in).
// Read-only, scrubbed of secrets like every tool answer; they add nothing to tools/list.
import { ResourceTemplate } from "@modelcontextprotocol/server";
import type { McpServer, ReadResourceResult } from "@modelcontextprotocol/server";
import type { Config } from "../config.js";
import { readAuditPage } from "../core/governance/audit.js";
import type { Conductor } from "../core/conductor.js";
import { UsageError } from "../core/errors.js";
import type { RecentSessions } from "./recent-sessions.js";
import { registerResourceUpdates } from "./resource-updates.js";
import { scrub } from "./scrub.js";

export interface ResourceOptions {
  config: Config;
  conductor(sessionId?: string): Promise<Conductor>;
  secrets(): string[];
  /** What the transcripts listing answers from. */
  recent: RecentSessions;
}

const AUDIT_ENTRIES = 200;

// Each read loads its core module then, not with the server: no listing needs them.
const VIEWS = {
  transcript: {
    title: "transcript",
    description: "The session's messages (newest 100) as opencode stores them",
    read: async (c: Conductor, id: string) => (await import("../core/sessions/messages.js")).sessionMessages(c, id, { limit: 100 }),
  },
  diff: {
    title: "diff",
    description: "Files the session changed, with patches (git projects)",
    read: async (c: Conductor, id: string) => (await import("../core/sessions/diff.js")).sessionDiff(c, id),
  },
  todo: {
    title: "todo list",
    description: "The agent's todo list for the session",
    read: async (c: Conductor, id: string) => (await import("../core/sessions/actions.js")).sessionTodo(c, id),
  },
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
        return json(uri, (await readAuditPage(o.config.auditPath, { limit: AUDIT_ENTRIES })).entries.reverse());
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
          ? () => {
              const rows = o.recent.list();
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
  // A worktree task's whole patch (its result carries a bounded preview), read from its branch.
  server.registerResource(
    "session-patch",
    new ResourceTemplate("opencode://session/{session_id}/patch", { list: undefined }),
    { title: "Worktree task patch", description: 'An isolation "worktree" task\'s whole patch, base to branch (git diff --binary)', mimeType: "text/x-diff" },
    async (uri, variables) => {
      const id = String(variables.session_id ?? "");
      if (!/^ses_[A-Za-z0-9]+$/.test(id)) throw new UsageError(`${uri.href.slice(0, 200)}: expected opencode://session/ses_…/patch`);
      const { worktreePatch } = await import("../core/worktrees/task.js");
      const p = await worktreePatch(await o.conductor(id), id);
      const text = p.truncated ? `${p.patch}\n… (cut at ${p.patch.length} characters: git diff ${p.base} ${p.head} has the rest)\n` : p.patch;
      return { contents: [{ uri: uri.href, mimeType: "text/x-diff", text: scrub(text, o.secrets()) }] };
    },
  );
}
