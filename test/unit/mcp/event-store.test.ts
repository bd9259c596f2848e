// The per-session replay store: ids replay in the order they were stored whatever the clock says,
// the bounds hold (notifications go before answers, the newest stays), and an id whose event was
// dropped still replays what is left of its stream.
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { SessionEventStore } from "../../../src/mcp/transports/event-store.js";

const answer = (id: number, pad = ""): JSONRPCMessage => ({ jsonrpc: "2.0", id, result: { pad } });
const note = (n: number): JSONRPCMessage => ({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "t", progress: n } });

async function replayed(store: SessionEventStore, last: string): Promise<Array<[string, JSONRPCMessage]>> {
  const sent: Array<[string, JSONRPCMessage]> = [];
  await store.replayEventsAfter(last, { send: async (id, m) => void sent.push([id, m]) });
  return sent;
}

describe("SessionEventStore", () => {
  it("replays a stream's answer stored in the same millisecond as its priming event", async () => {
    const store = new SessionEventStore();
    for (let i = 0; i < 209; i++) {
      const priming = await store.storeEvent(`s${i}`, {} as JSONRPCMessage);
      await store.storeEvent(`s${i}`, answer(i));
      expect((await replayed(store, priming)).map(([, m]) => m)).toEqual([answer(i)]);
      expect(await store.getStreamIdForEventId(priming)).toBe(`s${i}`);
    }
  });

  it("keeps at most its count and bytes, notifications dropped before answers, the newest always kept", async () => {
    const store = new SessionEventStore({ maxEvents: 5, maxBytes: 1_000 });
    const first = await store.storeEvent("a", note(0));
    await store.storeEvent("a", answer(1));
    for (let n = 2; n < 8; n++) await store.storeEvent("a", note(n));
    expect(store.held().events).toBe(5);
    // The answer outlived older and newer notifications.
    expect((await replayed(store, first)).map(([, m]) => m)).toEqual([answer(1), note(4), note(5), note(6), note(7)]);
    await store.storeEvent("b", answer(9, "x".repeat(5_000)));
    expect(store.held().events).toBe(1); // alone over the byte bound, and kept
    expect(store.held().bytes).toBeGreaterThan(5_000);
    await store.storeEvent("b", answer(10));
    expect(store.held()).toEqual({ events: 1, bytes: JSON.stringify(answer(10)).length });
  });

  it("refuses ids it never gave out, and clears on close", async () => {
    const store = new SessionEventStore();
    const id = await store.storeEvent("a", answer(1));
    expect(await store.getStreamIdForEventId("999_a")).toBeUndefined();
    expect(await store.getStreamIdForEventId("garbage")).toBeUndefined();
    store.clear();
    expect(store.held()).toEqual({ events: 0, bytes: 0 });
    expect(await replayed(store, id)).toEqual([]);
  });
});
