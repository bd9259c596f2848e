// Starting a turn on opencode 2.x (docs/opencode-2x-behaviour.md "Prompts"): 2.x keeps the model and
// agent on the session, so a prompt switches them first (unless the session's create answer said it
// holds them already), then sends the text (or a command) with its files and sub-agents. This file
// exists so v2.ts stays the engine's outline.
import { open } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import type { OpencodeV2Client } from "../../../client/v2/client.js";
import type { ModelRef } from "../../catalog/model-resolve.js";
import { quoted } from "../../errors.js";
import { UnsupportedOnEngineError, type AttachedFile, type PromptInput } from "../engine.js";
import type { HeldSettings } from "./v2-known.js";

export const modelRefV2 = (m: ModelRef) => ({ id: m.modelID, providerID: m.providerID, ...(m.variant ? { variant: m.variant } : {}) });

// As 2.x itself compares them (no variant is its "default").
const sameModel = (a: ModelRef | undefined, b: ModelRef) =>
  a?.providerID === b.providerID && a.modelID === b.modelID && (a.variant ?? "default") === (b.variant ?? "default");

/** `held`: what the session holds by its create answer, when this is its first prompt. */
/** `input.onAdmitted` hears the id the server's answer gives the prompt (its admitted input's, later its user message's). */
export async function promptV2(client: OpencodeV2Client, id: string, input: PromptInput, held?: HeldSettings): Promise<void> {
  const path = { sessionID: id };
  const files = await attachmentsV2(client, input.files ?? []);
  // 2.x keeps the model and agent on the session: switch first (both at once), then prompt.
  await Promise.all([
    input.model && !sameModel(held?.model, input.model) ? client.request("session.switchModel", { path, body: { model: modelRefV2(input.model) } }) : undefined,
    input.agent && held?.agent !== input.agent ? client.request("session.switchAgent", { path, body: { agent: input.agent } }) : undefined,
  ]);
  if (input.command) {
    // 2.0.26 takes `{name, text}` and no agent or model (the switches above set them); the
    // pre-release took `{command, arguments, agent, model}`. The server's document says which.
    const named = client.routes.get("session.command").bodyProperties.includes("name");
    const body = named
      ? { name: input.command, text: input.text, ...(files.length > 0 ? { files } : {}) }
      : {
          command: input.command,
          arguments: input.text,
          ...(input.agent ? { agent: input.agent } : {}),
          ...(input.model ? { model: modelRefV2(input.model) } : {}),
          ...(files.length > 0 ? { files } : {}),
        };
    await client.request("session.command", { path, body });
    return;
  }
  const { text, agents } = withMentions(input.text, input.agents ?? []);
  const body = {
    text,
    ...(input.delivery ? { delivery: input.delivery } : {}),
    ...(files.length > 0 ? { files } : {}),
    ...(agents.length > 0 ? { agents } : {}),
  };
  const answer = (await client.request("session.prompt", { path, body })) as { data?: { id?: unknown } } | undefined;
  if (typeof answer?.data?.id === "string") input.onAdmitted?.(answer.data.id);
}

/**
 * 2.x records a sub-agent attachment on the user message but does not pass it to the model; its
 * own clients put `@name` in the text and point the attachment's `mention` at it. So do we: the
 * model reads the mentions, the server keeps the attachments.
 */
function withMentions(text: string, names: string[]) {
  if (names.length === 0) return { text, agents: [] };
  let line = "";
  const agents = names.map((name) => {
    const mention = `@${name}`;
    const start = text.length + 2 + line.length + (line ? 1 : 0);
    line += (line ? " " : "") + mention;
    return { name, mention: { start, end: start + mention.length, text: mention } };
  });
  return { text: `${text}\n\n${line}`, agents };
}

// The pre-release sends the model text files and these images; any other file (PDF, BMP, binary) it
// records on the user message and silently leaves out of the model's request. It reads the file
// itself and decides by content; a NUL byte in the head is the plainest sign of a file it drops.
const IMAGES_FOR_THE_MODEL = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const HEAD_BYTES = 8192;

/** Refuses an attachment the model would never see (the prompt itself checks again). */
export async function checkPromptV2(client: OpencodeV2Client, input: PromptInput): Promise<void> {
  await attachmentsV2(client, input.files ?? []);
}

async function attachmentsV2(client: OpencodeV2Client, files: AttachedFile[]) {
  for (const file of files) {
    const passed = IMAGES_FOR_THE_MODEL.has(file.mime) || (file.mime === "text/plain" && !(await hasNulByte(file.path)));
    if (!passed) {
      throw new UnsupportedOnEngineError(
        `pass the attached file ${quoted(file.name)} (${file.mime === "text/plain" ? "binary" : file.mime}) to the model`,
        client.identity.version,
        "it sends only text files and PNG, JPEG, GIF or WebP images and would drop this one silently; attach a text or image version",
      );
    }
  }
  return files.map((f) => ({ uri: pathToFileURL(f.path).href, name: f.name }));
}

async function hasNulByte(path: string): Promise<boolean> {
  const handle = await open(path, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(HEAD_BYTES), 0, HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead).includes(0);
  } finally {
    await handle.close();
  }
}
