// The SSE events of one 2025-11-25 session, kept so that a client whose stream drops reconnects
// with Last-Event-ID and gets what it missed (the SDK ships the interface, not a store). Held in
// memory for the session's life and cleared with it.
//
// Ids are `<counter>_<stream>`: a per-session counter, never a clock, so two events of the same
// millisecond (a stream's priming event and its answer) still replay in the order they were stored.
// The stream is read back from the id itself, so an id whose event was since dropped still names
// its stream, and a replay sends what is left of it.
//
// Bounded by count and bytes (serialized JSON): past either, the oldest events go, notifications
// (progress, priming, logging) before answers, since an answer is what a reconnecting client needs.
// The newest event is always kept, even when it alone is larger than the byte bound.
import type { EventId, EventStore, JSONRPCMessage, StreamId } from "@modelcontextprotocol/server";

export interface EventBounds {
  maxEvents: number;
  maxBytes: number;
}

export const DEFAULT_EVENT_BOUNDS: EventBounds = { maxEvents: 1_000, maxBytes: 4 * 1024 * 1024 };

interface Stored {
  seq: number;
  streamId: StreamId;
  bytes: Buffer;
}

const ID = /^(\d+)_(.+)$/;

export class SessionEventStore implements EventStore {
  private next = 0;
  private size = 0;
  // Insertion order is counter order: the first key of each map is its oldest event.
  private readonly notes = new Map<EventId, Stored>();
  private readonly answers = new Map<EventId, Stored>();
  /** Streams being replayed now: an event stored meanwhile waits for the replayed stream to be connected. */
  private readonly replaying = new Map<StreamId, Promise<void>>();

  constructor(private readonly bounds: EventBounds = DEFAULT_EVENT_BOUNDS) {}

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const seq = ++this.next;
    const id = `${seq}_${streamId}`;
    const stored: Stored = { seq, streamId, bytes: Buffer.from(JSON.stringify(message)) };
    ("result" in message || "error" in message ? this.answers : this.notes).set(id, stored);
    this.size += stored.bytes.length;
    this.trim(id);
    // The SDK writes this event to the stream it finds connected once we return. A replay of the
    // same stream may have just ended without seeing it and not yet be connected: wait for that, so
    // the event reaches the replayed stream instead of none (the SDK skips what the replay sent).
    const replay = this.replaying.get(streamId);
    if (replay) await replay;
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const match = ID.exec(eventId);
    // Only ids this store gave out: unknown ones get the SDK's 400.
    if (!match || Number(match[1]) > this.next) return undefined;
    return match[2];
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const streamId = await this.getStreamIdForEventId(lastEventId);
    if (streamId === undefined) return "";
    const after = Number(ID.exec(lastEventId)![1]);
    let done!: () => void;
    const replay = new Promise<void>((resolve) => (done = resolve));
    this.replaying.set(streamId, replay);
    try {
      // Re-read after each send: events stored while replaying are sent too, in counter order.
      let last = after;
      for (;;) {
        const next = this.firstAfter(streamId, last);
        if (!next) break;
        last = next[1].seq;
        await send(next[0], JSON.parse(next[1].bytes.toString("utf8")) as JSONRPCMessage);
      }
      return streamId;
    } finally {
      // The SDK connects the replayed stream right after this returns; a macrotask later it has.
      setImmediate(() => {
        if (this.replaying.get(streamId) === replay) this.replaying.delete(streamId);
        done();
      });
    }
  }

  /** Events and bytes held now. */
  held(): { events: number; bytes: number } {
    return { events: this.notes.size + this.answers.size, bytes: this.size };
  }

  /** Drops every event (the session is closed). */
  clear(): void {
    this.notes.clear();
    this.answers.clear();
    this.size = 0;
  }

  private firstAfter(streamId: StreamId, seq: number): [EventId, Stored] | undefined {
    let best: [EventId, Stored] | undefined;
    for (const map of [this.notes, this.answers]) {
      for (const entry of map) {
        if (entry[1].seq > seq && entry[1].streamId === streamId) {
          if (!best || entry[1].seq < best[1].seq) best = entry;
          break; // counter order: the first match of a map is its oldest
        }
      }
    }
    return best;
  }

  /** Drops the oldest events past the bounds, notifications first; never `keep` (the newest). */
  private trim(keep: EventId): void {
    while (this.notes.size + this.answers.size > this.bounds.maxEvents || this.size > this.bounds.maxBytes) {
      const oldest = firstKey(this.notes, keep) ?? firstKey(this.answers, keep);
      if (oldest === undefined) return;
      const map = this.notes.has(oldest) ? this.notes : this.answers;
      this.size -= map.get(oldest)!.bytes.length;
      map.delete(oldest);
    }
  }
}

function firstKey(map: Map<EventId, Stored>, not: EventId): EventId | undefined {
  for (const key of map.keys()) if (key !== not) return key;
  return undefined;
}
