import { z } from "zod";
import { listSessions } from "../../core/sessions.js";
import { directoryField } from "../common.js";
import { defineTool } from "../tool.js";

export const ocSessions = defineTool({
  name: "oc_sessions",
  title: "List sessions",
  description: "List opencode sessions, newest first: id, title, directory, times. Filter by directory, title text, or parent (sub-agent sessions). Use an id with oc_session, oc_result, oc_send or oc_delegate session_id.",
  toolset: "sessions",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: {
    directory: directoryField,
    search: z.string().optional().describe("Text in the title"),
    parent_id: z.string().optional().describe("Only sub-agent sessions of this session"),
    limit: z.number().int().min(1).max(500).optional().describe("Default 50"),
  },
  output: {
    sessions: z.array(z.object({ id: z.string(), title: z.string(), directory: z.string(), parent_id: z.string().optional(), created: z.string(), updated: z.string(), archived: z.string().optional() })),
  },
  async run(args, ctx) {
    const rows = await listSessions(await ctx.conductor(), { directory: args.directory, search: args.search, parentId: args.parent_id, limit: args.limit });
    const sessions = rows.map(({ parentId, ...r }) => ({ ...r, ...(parentId ? { parent_id: parentId } : {}) }));
    const text = sessions.length === 0 ? "No sessions." : sessions.map((s) => `${s.id}  ${s.updated}  ${s.title}  (${s.directory})`).join("\n");
    return { text, data: { sessions } };
  },
});
