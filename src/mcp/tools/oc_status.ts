import { z } from "zod";
import { serverStatus } from "../../core/discovery.js";
import { directoryField } from "../common.js";
import { defineTool } from "../tool.js";

export const ocStatus = defineTool({
  name: "oc_status",
  title: "Server status",
  description: "The opencode server in use (URL, version, health, default model, how it was found). Call first when connecting fails.",
  toolset: "discover",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: { directory: directoryField },
  output: {
    version: z.string(),
    healthy: z.boolean(),
  },
  async run(args, ctx) {
    const s = await serverStatus(await ctx.conductor(), { directory: args.directory });
    const connection = ctx.connection?.();
    const data = {
      url: s.url,
      version: s.version,
      healthy: s.healthy,
      ...(s.defaultModel ? { default_model: s.defaultModel } : {}),
      counts: s.counts,
      read_only: ctx.config.readOnly,
      toolsets: ctx.config.toolsets,
      ...(connection ? { connection: { mode: connection.mode, steps: connection.steps } } : {}),
    };
    const c = s.counts;
    const text = `opencode ${s.version} at ${s.url}: ${s.healthy ? "healthy" : "UNHEALTHY"}. Default model: ${s.defaultModel ?? "(none)"}. ${c.providers} providers, ${c.models} models, ${c.agents} agents, ${c.commands} commands.${ctx.config.readOnly ? " Read-only mode." : ""}${connection ? `\nConnection (${connection.mode}): ${connection.steps.map((x) => `${x.step}: ${x.result}`).join("; ")}` : ""}`;
    return { text, data };
  },
});
