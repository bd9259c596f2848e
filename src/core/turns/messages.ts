// Reading a session's messages for a turn: from the server, or as the event stream told them.
import type { OpencodeClient } from "../../client/connect.js";
import type { Schemas } from "../../client/types.js";
import type { SessionMessage } from "./session-message.js";

/** Messages read to find the last turn; a longer turn falls back to reading all. */
const TURN_PAGE = 50;

/** Messages and parts of one session as `message.*` events describe them, in id (= creation) order. */
export class SeenMessages {
  complete = true;
  private readonly infos = new Map<string, Schemas["Message"]>();
  private readonly parts = new Map<string, Map<string, Schemas["Part"]>>();

  message(info: Schemas["Message"]): void {
    this.infos.set(info.id, info);
  }

  part(part: Schemas["Part"]): void {
    let parts = this.parts.get(part.messageID);
    if (!parts) this.parts.set(part.messageID, (parts = new Map()));
    parts.set(part.id, part);
  }

  remove(messageId: string, partId?: string): void {
    if (partId !== undefined) this.parts.get(messageId)?.delete(partId);
    else this.infos.delete(messageId);
  }

  list(): SessionMessage[] {
    const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    return [...this.infos.values()].sort(byId).map((info) => ({ info, parts: [...(this.parts.get(info.id)?.values() ?? [])].sort(byId) }));
  }
}

/** The session's last turn: the newest messages back to (and including) the last user message. */
export async function readLastTurn(client: OpencodeClient, sessionId: string): Promise<SessionMessage[]> {
  const page = await client.call("session.messages", { path: { sessionID: sessionId }, query: { limit: TURN_PAGE } });
  if (page.length < TURN_PAGE || page.some((m) => m.info.role === "user")) return page;
  return client.call("session.messages", { path: { sessionID: sessionId } });
}

/** The newest message id of a session (read before prompting, see {@link TurnWatch.prompted}). */
export async function newestMessageId(client: OpencodeClient, sessionId: string): Promise<string | undefined> {
  const page = await client.call("session.messages", { path: { sessionID: sessionId }, query: { limit: 1 } });
  return page.at(-1)?.info.id;
}
