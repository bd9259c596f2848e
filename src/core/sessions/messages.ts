// A session's messages, compact and paged, for a caller reading what an agent did.
import type { CoreContext } from "../context.js";
import { type DirectoryOption } from "../context.js";
import { UsageError } from "../errors.js";
import { formatModel } from "../catalog/model-resolve.js";
import { errorOf, type TurnError } from "../turns/summary.js";
import type { Message } from "../model/message.js";
import { validId } from "../inputs/ids.js";
import { engineIn, iso } from "./rows.js";

export interface CompactMessage {
  id: string;
  role: "user" | "assistant";
  time: string;
  model?: string;
  text?: string;
  /** Tool names, in call order. */
  tools?: string[];
  error?: TurnError;
}

export interface MessagesPage {
  /** Oldest first. */
  messages: CompactMessage[];
  /** Pass as `before` for the page of older messages; absent on the first message. */
  nextBefore?: string;
}

const MAX_TEXT = 4_000;

/** The newest `limit` (default 20) messages, or those before the `before` cursor of an earlier page. */
export async function sessionMessages(
  ctx: CoreContext,
  id: string,
  options: DirectoryOption & { limit?: number; before?: string } = {},
): Promise<MessagesPage> {
  const limit = options.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`limit must be a positive integer, got ${limit}.`);
  const page = await messagesPage(ctx, validId(id, "ses", "sessionId"), { ...options, limit });
  return { messages: page.messages.map(compactMessage), ...(page.nextBefore ? { nextBefore: page.nextBefore } : {}) };
}

/** One page of the session's messages, oldest first (the engine keeps the paging cursor opaque). */
function messagesPage(
  ctx: CoreContext,
  sessionID: string,
  options: DirectoryOption & { limit: number; before?: string },
): Promise<{ messages: Message[]; nextBefore?: string }> {
  return engineIn(ctx, options.directory).messagesPage(sessionID, { limit: options.limit, ...(options.before ? { before: options.before } : {}) });
}

function compactMessage(m: Message): CompactMessage {
  const info = m.info;
  const text = m.parts
    .flatMap((p) => (p.type === "text" && !p.synthetic && !p.ignored ? [p.text] : []))
    .join("\n")
    .trim();
  const tools = m.parts.flatMap((p) => (p.type === "tool" ? [p.tool] : []));
  const ref = info.role === "user" ? info.model : { providerID: info.providerID, modelID: info.modelID };
  // opencode 2.x records no model on a user message (engine/v2/v2-messages.ts): leave it out then.
  const model = ref.providerID ? formatModel(ref) : undefined;
  const error = info.role === "assistant" ? errorOf(info.error) : undefined;
  return {
    id: info.id,
    role: info.role,
    time: iso(info.time.created),
    ...(model ? { model } : {}),
    ...(text ? { text: text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}… (${text.length - MAX_TEXT} more characters)` : text } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(error ? { error } : {}),
  };
}

/** The last user message that started a turn (compaction requests are user messages too: skipped). */
export async function lastUserMessage(ctx: CoreContext, sessionID: string, directory: string | undefined): Promise<Message | undefined> {
  let before: string | undefined;
  do {
    const page = await messagesPage(ctx, sessionID, { limit: 20, before, directory });
    const hit = page.messages.findLast((m) => m.info.role === "user" && !m.parts.some((p) => p.type === "compaction"));
    if (hit) return hit;
    before = page.nextBefore;
  } while (before);
  return undefined;
}
