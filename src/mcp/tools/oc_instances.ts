// oc_instances: the private opencode servers behind `isolation: "instance"` (list, stop). Rows come
// from the registry without their passwords; nothing here ever reads a password into an answer.
import { z } from "zod";
import { quoted, UsageError } from "../../core/errors.js";
import type { InstanceInfo } from "../../core/instances/types.js";
import type { InstanceManager } from "../../core/instances/manager.js";
import type { PublicInstanceRow } from "../../core/instances/registry.js";
import { defineTool, type ToolContext } from "../tool-def.js";

/** The tool, bound to a way of getting the manager (tests pass their own). */
export function instancesTool(manager: (ctx: ToolContext) => InstanceManager | Promise<InstanceManager>) {
  return defineTool({
    name: "oc_instances",
    title: "Private opencode instances",
    description:
      'Private headless opencode servers that oc_delegate starts for isolation "instance" (one per directory, guarded, reaped when idle). list: url, directory, pid, sessions, idle time. stop: by directory or pid.',
    toolset: "instances",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    audit: { changesFiles: () => false },
    input: {
      action: z.enum(["list", "stop"]),
      directory: z.string().optional().describe("stop: the instance of this directory"),
      pid: z.number().int().positive().optional().describe("stop: the instance with this pid"),
    },
    output: {
      instances: z.array(z.looseObject({ pid: z.number(), url: z.string(), directory: z.string() })),
    },
    async run(args, ctx) {
      const m = await manager(ctx);
      if (args.action === "stop") {
        const target = args.pid ?? args.directory;
        if (target === undefined) throw new UsageError('action "stop" needs `directory` or `pid` (see action "list").');
        const row = await m.stop(target);
        if (!row) return { text: `No instance for ${quoted(target)}. Call oc_instances with action "list".`, data: { instances: [] } };
        return { text: `Stopped the instance pid ${row.pid} (${row.url}, ${row.directory}).`, data: { instances: [shape(row)] } };
      }
      const rows = await m.list();
      const text = rows.length === 0 ? "No private instances are running." : rows.map(line).join("\n");
      return { text, data: { instances: rows.map(shape) } };
    },
  });
}

// The manager (and the client it starts servers with) is loaded on the first call, not with the server.
export const ocInstances = instancesTool(async (ctx) => (await import("../../core/instances/shared.js")).sharedInstanceManager(ctx.config));

function shape(row: PublicInstanceRow | InstanceInfo) {
  const info = row as Partial<InstanceInfo>;
  return {
    pid: row.pid,
    url: row.url,
    directory: row.directory,
    port: row.port,
    sandbox: row.sandbox,
    started_at: row.startedAt,
    ...(info.idleS !== undefined ? { idle_s: info.idleS } : {}),
    ...(info.owned !== undefined ? { owned: info.owned } : {}),
    conductor_pid: row.conductorPid,
    sessions: row.sessions.map((s) => ({
      id: s.id,
      title: s.title,
      model: s.model,
      started_at: s.startedAt,
      fallbacks: s.fallbacks,
      attach: `opencode attach ${row.url} --session ${s.id}`,
    })),
  };
}

function line(row: InstanceInfo): string {
  const idle = row.idleS !== undefined ? `idle ${row.idleS}s` : "idle ?";
  const sessions = row.sessions.length === 0 ? "no sessions" : `sessions ${row.sessions.map((s) => s.id).join(", ")}`;
  const owner = row.owned ? "" : `  (conductor pid ${row.conductorPid})`;
  return `pid ${row.pid}  ${row.url}  ${row.directory}  ${idle}  ${sessions}${owner}`;
}
