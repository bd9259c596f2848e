import { z } from "zod";
import { listSessions } from "../../core/sessions/rows.js";
import { clamped, directoryField } from "../shared-fields.js";
import { defineTool } from "../tool-def.js";

export const ocSessions = defineTool({
  name: "oc_sessions",
  title: "List sessions",
  description: "Sessions, newest first (id, title, directory); search matches titles.",
  toolset: "sessions",
  guide: ["oc_sessions / oc_session list and manage sessions (diff, fork, revert: restores the files too, export ...)."],
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: {
    directory: directoryField,
    search: z.string().optional(),
    parent_id: z.string().optional(),
    limit: clamped(1, 500, true).optional(),
    all_servers: z.boolean().optional(),
  },
  output: {
    sessions: z.array(z.unknown()),
  },
  async run(args, ctx) {
    const options = { directory: args.directory, search: args.search, parentId: args.parent_id, limit: args.limit };
    const servers = [await ctx.conductor(), ...(args.all_servers ? ((await ctx.otherServers?.()) ?? []) : [])];
    const lists = await Promise.all(
      // A server that went away since the scan must not hide the others; the main one's errors show.
      servers.map(async (c, i) =>
        (await (i === 0 ? listSessions(c, options) : listSessions(c, options).catch(() => []))).map((row) => ({ ...row, server: c.engine.url })),
      ),
    );
    const sessions = lists.flat().map(({ parentId, ...r }) => ({ ...r, ...(parentId ? { parent_id: parentId } : {}) }));
    const text =
      sessions.length === 0
        ? "No sessions."
        : sessions.map((s) => `${s.id}  ${s.updated}  ${s.title}  (${s.directory}${args.all_servers ? ` on ${s.server}` : ""})`).join("\n");
    return { text, data: { sessions } };
  },
});
