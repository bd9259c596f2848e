// A session's pending input on opencode 2.x: the prompts it has admitted but not promoted yet (a
// `queue` prompt waits for the end of the running execution, a `steer` one for the end of the
// current step; docs/opencode-2x-behaviour.md "Steering and queueing"). The pre-release lists them
// (`GET /api/session/{id}/pending`, read-only); 2.0.26 calls the list the inbox and can also cancel
// a queued prompt (`DELETE …/inbox/{id}`) or turn it into a steer (`PATCH …/inbox/{id}
// {delivery: "steer"}`). What a server can do is read from its own document (the route adapter),
// never from its version. opencode 1.x has no such list: a prompt sent during a turn is a user
// message at once.
import type { OpencodeV2Client } from "../../../client/v2/client.js";
import type { Delivery, WaitingPrompt } from "../engine.js";
import { UnsupportedOnEngineError } from "../engine.js";
import { dataOf } from "./v2-sessions.js";

/** One admitted prompt (or synthetic input, compaction, move) that the session has not promoted yet. */
export interface QueuedInput {
  /** `msg_…`: the id its user message will have. */
  id: string;
  sessionId: string;
  /** `user` for a prompt; `synthetic`, `compaction`, `move` for the server's own inputs. */
  type: string;
  delivery: Delivery;
  /** A prompt's (or synthetic input's) text. */
  text?: string;
  /** Epoch ms it was admitted. */
  created?: number;
}

/** What this server can do with pending input, from its document. */
export interface InboxCapabilities {
  /** The prompts waiting to be promoted can be listed (pre-release `pending`, 2.0.26 `inbox`). */
  listQueued: boolean;
  /** A queued prompt can be taken back before it runs (2.0.26). */
  cancelQueued: boolean;
  /** A queued prompt can be made a steer, so the next model call sees it (2.0.26). */
  steerQueued: boolean;
}

export function inboxCapabilities(client: OpencodeV2Client): InboxCapabilities {
  const { routes } = client;
  return { listQueued: routes.has("inbox.list"), cancelQueued: routes.has("inbox.cancel"), steerQueued: routes.has("inbox.steer") };
}

// The pre-release's entry: `{id, sessionID, timeCreated, type, data: {text…}, delivery}`;
// 2.0.26's: `{id, sessionID, time: {created}, type, payload: {text…}, delivery}`.
interface V2InboxEntry {
  id: string;
  sessionID: string;
  type: string;
  delivery: Delivery;
  timeCreated?: number;
  time?: { created?: number };
  data?: { text?: unknown };
  payload?: { text?: unknown };
}

function queuedInputOf(e: V2InboxEntry): QueuedInput {
  const text = (e.payload ?? e.data)?.text;
  const created = e.time?.created ?? e.timeCreated;
  return {
    id: e.id,
    sessionId: e.sessionID,
    type: e.type,
    delivery: e.delivery,
    ...(typeof text === "string" ? { text } : {}),
    ...(typeof created === "number" ? { created } : {}),
  };
}

const NO_INBOX = "its API has no such route (2.0.26 and later have the session inbox)";

export async function queuedInputsV2(client: OpencodeV2Client, sessionId: string): Promise<QueuedInput[]> {
  if (!client.routes.has("inbox.list")) throw new UnsupportedOnEngineError("list a session's queued prompts", client.identity.version, NO_INBOX);
  return dataOf<V2InboxEntry[]>(await client.request("inbox.list", { path: { sessionID: sessionId } })).map(queuedInputOf);
}

/** Takes a queued prompt back before it runs. */
export async function cancelQueuedV2(client: OpencodeV2Client, sessionId: string, inputId: string): Promise<void> {
  if (!client.routes.has("inbox.cancel")) throw new UnsupportedOnEngineError("cancel a queued prompt", client.identity.version, NO_INBOX);
  await client.request("inbox.cancel", { path: { sessionID: sessionId, inboxID: inputId } });
}

/** Makes a queued prompt a steer: promoted when the current step ends instead of when the execution would. */
export async function steerQueuedV2(client: OpencodeV2Client, sessionId: string, inputId: string): Promise<void> {
  if (!client.routes.has("inbox.steer")) {
    throw new UnsupportedOnEngineError("turn a queued prompt into a steer", client.identity.version, `${NO_INBOX}; send the message again with delivery steer`);
  }
  await client.request("inbox.steer", { path: { sessionID: sessionId, inboxID: inputId }, body: { delivery: "steer" } });
}

/** What an interrupt does to a prompt still queued on 2.x (docs/opencode-2x-behaviour.md "Waiting prompts"). */
export const V2_ON_INTERRUPT =
  "interrupting the session (oc_interrupt) stops the running turn but opencode keeps this message waiting: it runs with the next prompt sent to the session";

/**
 * The prompt `inputId` (or, without one, the only prompt) while the session still holds it
 * unpromoted: the running execution is another prompt's. Undefined once it is promoted (its own
 * turn runs, or ran) or nothing is listed.
 */
export async function waitingPromptV2(client: OpencodeV2Client, sessionId: string, inputId: string | undefined): Promise<WaitingPrompt | undefined> {
  if (!client.routes.has("inbox.list")) return undefined;
  const prompts = (await queuedInputsV2(client, sessionId)).filter((q) => q.type === "user");
  const ours = inputId === undefined ? (prompts.length === 1 ? prompts[0] : undefined) : prompts.find((q) => q.id === inputId);
  if (!ours) return undefined;
  return { inputId: ours.id, withdrawable: client.routes.has("inbox.cancel"), onInterrupt: V2_ON_INTERRUPT };
}

/** Cancels a queued prompt, then lists the inbox again: the cancel counts only once it is gone from it. */
export async function withdrawPromptV2(client: OpencodeV2Client, sessionId: string, inputId: string): Promise<void> {
  await cancelQueuedV2(client, sessionId, inputId);
  if ((await queuedInputsV2(client, sessionId)).some((q) => q.id === inputId))
    throw new Error(`opencode ${client.identity.version} answered the cancel of queued prompt ${inputId} but still lists it in session ${sessionId}'s inbox`);
}
