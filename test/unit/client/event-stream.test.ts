import { describe, expect, it } from "vitest";
import { streamEvents } from "../../../src/client/event-stream.js";
import { AuthError } from "../../../src/client/errors.js";

const encoder = new TextEncoder();

/** A stream that sends the given SSE lines (split at awkward places) and then ends or stays open. */
function sseStream(frames: string[], { end = true } = {}): ReadableStream<Uint8Array> {
  const text = frames.map((f) => `data: ${f}\n\n`).join("");
  return new ReadableStream({
    start(controller) {
      // Split mid-line to prove the parser buffers partial chunks.
      for (let i = 0; i < text.length; i += 37) controller.enqueue(encoder.encode(text.slice(i, i + 37)));
      if (end) controller.close();
    },
  });
}

const connected = JSON.stringify({ payload: { id: "evt_1", type: "server.connected", properties: {} } });
const heartbeat = JSON.stringify({ payload: { id: "evt_2", type: "server.heartbeat", properties: {} } });
const sync = JSON.stringify({ directory: "/p", payload: { type: "sync", syncEvent: {} } });
const idle = (id: string) =>
  JSON.stringify({ directory: "/p", project: "global", payload: { id: "evt_3", type: "session.idle", properties: { sessionID: id } } });

describe("streamEvents", () => {
  it("yields typed events with their directory, skipping heartbeats and sync duplicates", async () => {
    const controller = new AbortController();
    const seen: unknown[] = [];
    for await (const event of streamEvents(async () => sseStream([connected, heartbeat, sync, idle("ses_a")]), {
      signal: controller.signal,
      reconnect: false,
    })) {
      seen.push(event);
    }
    expect(seen).toEqual([
      { id: "evt_1", type: "server.connected", properties: {} },
      { id: "evt_3", type: "session.idle", properties: { sessionID: "ses_a" }, directory: "/p", project: "global" },
    ]);
  });

  it("reconnects after a drop and says so once subscribed again", async () => {
    let opens = 0;
    const types: string[] = [];
    const controller = new AbortController();
    const open = async () => {
      opens++;
      if (opens === 2) throw new TypeError("fetch failed"); // server briefly down
      return sseStream(opens === 1 ? [connected, idle("ses_a")] : [connected, idle("ses_b")], { end: opens === 1 });
    };
    for await (const event of streamEvents(open, { signal: controller.signal, maxBackoffMs: 10 })) {
      types.push(event.type === "session.idle" ? `idle:${event.properties.sessionID}` : event.type);
      if (event.type === "session.idle" && event.properties.sessionID === "ses_b") controller.abort();
    }
    expect(types).toEqual(["server.connected", "idle:ses_a", "conductor.disconnected", "server.connected", "conductor.reconnected", "idle:ses_b"]);
    expect(opens).toBe(3);
  });

  it("treats a silent stream as dropped", async () => {
    let opens = 0;
    const controller = new AbortController();
    const types: string[] = [];
    const open = async () => (++opens === 1 ? sseStream([connected], { end: false }) : sseStream([connected, idle("ses_c")], { end: false }));
    for await (const event of streamEvents(open, { signal: controller.signal, idleTimeoutMs: 100, maxBackoffMs: 10 })) {
      types.push(event.type);
      if (event.type === "session.idle") controller.abort();
    }
    expect(types).toEqual(["server.connected", "conductor.disconnected", "server.connected", "conductor.reconnected", "session.idle"]);
  });

  it("does not retry auth failures or a server never reached", async () => {
    await expect(async () => {
      for await (const _ of streamEvents(async () => {
        throw new AuthError("bad password", 401);
      }))
        void _;
    }).rejects.toBeInstanceOf(AuthError);
    await expect(async () => {
      for await (const _ of streamEvents(async () => {
        throw new TypeError("fetch failed");
      }))
        void _;
    }).rejects.toThrow("fetch failed");
  });
});

describe("streamEvents giving up", () => {
  it("throws once the server has been gone longer than giveUpAfterMs", async () => {
    let opens = 0;
    const open = async () => {
      if (++opens === 1) return sseStream([connected]);
      throw new TypeError("fetch failed");
    };
    const seen: string[] = [];
    await expect(async () => {
      for await (const event of streamEvents(open, { maxBackoffMs: 5, giveUpAfterMs: 50 })) seen.push(event.type);
    }).rejects.toThrow(/down for .* giving up/);
    expect(seen).toEqual(["server.connected", "conductor.disconnected"]); // said once per outage
    expect(opens).toBeGreaterThan(2);
  });
});
