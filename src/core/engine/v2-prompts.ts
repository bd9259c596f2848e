// Starting a turn on opencode 2.x (docs/opencode-2x-behaviour.md): 2.x keeps the model and agent on
// the session, so a prompt switches them first, then sends the text (or a command) with its files
// and subagents. This file exists so v2.ts stays the engine's outline.
import { pathToFileURL } from "node:url";
import type { OpencodeV2Client } from "../../client/v2/client.js";
import type { ModelRef } from "../catalog/model-resolve.js";
import type { PromptInput } from "./engine.js";

const modelRefV2 = (m: ModelRef) => ({ id: m.modelID, providerID: m.providerID, ...(m.variant ? { variant: m.variant } : {}) });

export async function promptV2(client: OpencodeV2Client, id: string, input: PromptInput): Promise<void> {
  const path = { sessionID: id };
  // 2.x keeps the model and agent on the session: switch first, then prompt.
  if (input.model) await client.request("session.switchModel", { path, body: { model: modelRefV2(input.model) } });
  if (input.agent) await client.request("session.switchAgent", { path, body: { agent: input.agent } });
  const files = (input.files ?? []).map((f) => ({ uri: pathToFileURL(f.path).href, name: f.name }));
  if (input.command) {
    const body = {
      command: input.command,
      arguments: input.text,
      ...(input.agent ? { agent: input.agent } : {}),
      ...(input.model ? { model: modelRefV2(input.model) } : {}),
    };
    await client.request("session.command", { path, body });
    return;
  }
  const body = {
    text: input.text,
    ...(input.delivery ? { delivery: input.delivery } : {}),
    ...(files.length > 0 ? { files } : {}),
    ...(input.agents?.length ? { agents: input.agents.map((name) => ({ name })) } : {}),
  };
  await client.request("session.prompt", { path, body });
}
