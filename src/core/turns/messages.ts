// A session's messages as the event stream told them (opencode 1.x streams whole messages); reading
// them from the server is the engine's (engine/engine.ts).
import type { Message, MessageInfo, Part } from "../model/message.js";

/** Messages and parts of one session as `message.*` events describe them, in id (= creation) order. */
export class SeenMessages {
  complete = true;
  private readonly infos = new Map<string, MessageInfo>();
  private readonly parts = new Map<string, Map<string, Part>>();

  message(info: MessageInfo): void {
    this.infos.set(info.id, info);
  }

  part(part: Part): void {
    let parts = this.parts.get(part.messageID);
    if (!parts) this.parts.set(part.messageID, (parts = new Map()));
    parts.set(part.id, part);
  }

  remove(messageId: string, partId?: string): void {
    if (partId !== undefined) this.parts.get(messageId)?.delete(partId);
    else this.infos.delete(messageId);
  }

  list(): Message[] {
    const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    return [...this.infos.values()].sort(byId).map((info) => ({ info, parts: [...(this.parts.get(info.id)?.values() ?? [])].sort(byId) }));
  }
}
