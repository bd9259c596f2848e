// What the event hub (src/core/event-hub.ts) tells its listeners when the stream drops, through
// the real client (request errors, the stream's silence detection and reconnects) on a fetch that
// plays the server's three states: up, stopped (SIGSTOP: connections are accepted, nothing is
// answered) and dead (the port refuses). The clock is faked, so the 35 s silence passes at once.
// - stopped: `conductor.unreachable`, never `lost`; the stream keeps trying and, once the server
//   answers again, says `conductor.reconnected`;
// - dead: `conductor.lost` within the health check's second;
// - stopped, then dead: `unreachable` first, then `lost` at the next health check.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connect } from "../../../src/client/index.js";
import { V1Engine } from "../../../src/core/engine/v1/v1-engine.js";
import { EventHub, type HubEvent } from "../../../src/core/event-hub.js";

type State = "up" | "stopped" | "dying" | "dead";
const URL_ = "http://opencode.hub.invalid";

/** undici's error for a refused connection (what `fetch` throws when nothing listens on the port). */
function refused(): TypeError {
  return new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:4096"), { code: "ECONNREFUSED" }) });
}

/** undici's error for a connection the peer closed before answering (a process exiting drops what it had accepted). */
function reset(): TypeError {
  return new TypeError("fetch failed", { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) });
}

/** A server whose state the test sets; stopped requests wait until it is up again (or their caller gives up). */
function playedServer() {
  let state: State = "up";
  let dyingResets = 3;
  const held = new Set<() => void>();
  const stream = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`data: ${JSON.stringify({ payload: { type: "server.connected", properties: {} } })}\n\n`));
      },
    });
  const answer = (path: string) =>
    path === "/global/event"
      ? new Response(stream(), { status: 200, headers: { "content-type": "text/event-stream" } })
      : Response.json({ healthy: true, version: "1.18.33" });
  const fetch = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    if (state === "dead") throw refused();
    if (state === "dying") {
      // Its port still accepts for a moment and closes what it accepted; then nothing listens.
      if (--dyingResets <= 0) state = "dead";
      throw reset();
    }
    if (state === "up") return answer(path);
    return new Promise<Response>((resolve, reject) => {
      const release = () => {
        held.delete(release);
        if (state === "dead") reject(refused());
        else resolve(answer(path));
      };
      held.add(release);
      request.signal.addEventListener("abort", () => (held.delete(release), reject(request.signal.reason)), { once: true });
    });
  };
  return {
    fetch,
    set(next: State) {
      state = next;
      if (next !== "stopped") for (const release of [...held]) release();
    },
  };
}

/** A hub listening to a server that has just been stopped (nothing answers from here on). */
async function hubOnStopped() {
  const server = playedServer();
  const engine = new V1Engine(connect({ url: URL_, fetch: server.fetch }));
  const hub = new EventHub(engine);
  const seen: Array<{ type: string; at: number; message?: string }> = [];
  const t0 = Date.now();
  await hub.subscribe((event: HubEvent) => {
    if (!event.type.startsWith("conductor.")) return;
    const error = (event as { properties?: { error?: { message: string } } }).properties?.error;
    seen.push({ type: event.type, at: Date.now() - t0, ...(error ? { message: error.message } : {}) });
  });
  server.set("stopped");
  return { server, hub, seen, types: () => seen.map((e) => e.type) };
}

beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: true, toFake: ["setTimeout", "clearTimeout", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the hub when the stream drops", () => {
  it("a stopped server is unreachable, never lost; when it answers again the stream is back", async () => {
    const { server, hub, seen, types } = await hubOnStopped();
    // Silent for 35 s (the stream's idle limit), then two health checks that get no answer within 1 s each.
    await vi.advanceTimersByTimeAsync(37_500);
    expect(types()).toEqual(["conductor.disconnected", "conductor.unreachable"]);
    expect(seen[1]!.at).toBeLessThan(38_000);
    expect(seen[1]!.message).toMatch(/event stream silent for 35 s; no answer to two health checks of 1 s\).*outcome is unknown and may still come/);
    // It stays unknown: more health checks, still no answer, and no `lost`.
    await vi.advanceTimersByTimeAsync(20_000);
    expect(types()).toEqual(["conductor.disconnected", "conductor.unreachable"]);
    server.set("up");
    await vi.waitFor(() => expect(types()).toContain("conductor.reconnected"));
    expect(types()).not.toContain("conductor.lost");
    hub.close();
  });

  it("a dead server (its port refuses) is lost within the health check's second", async () => {
    const { server, hub, seen, types } = await hubOnStopped();
    await vi.advanceTimersByTimeAsync(34_000);
    server.set("dead");
    await vi.advanceTimersByTimeAsync(1_500);
    expect(types()).toEqual(["conductor.disconnected", "conductor.lost"]);
    expect(seen[1]!.at - seen[0]!.at).toBeLessThan(1_000);
    expect(seen[1]!.message).toMatch(/refuses connections.*no end of it will ever be recorded/);
    hub.close();
  });

  it("a dying server (its port resets what it accepted, then refuses) is lost, never unreachable", async () => {
    const { server, hub, types } = await hubOnStopped();
    await vi.advanceTimersByTimeAsync(34_000);
    server.set("dying");
    await vi.advanceTimersByTimeAsync(2_000);
    expect(types()).toEqual(["conductor.disconnected", "conductor.lost"]);
    hub.close();
  });

  it("a stopped server that dies: unreachable first, lost at the next health check", async () => {
    const { server, hub, seen, types } = await hubOnStopped();
    await vi.advanceTimersByTimeAsync(37_500);
    expect(types()).toEqual(["conductor.disconnected", "conductor.unreachable"]);
    server.set("dead");
    await vi.advanceTimersByTimeAsync(6_000);
    expect(types()).toEqual(["conductor.disconnected", "conductor.unreachable", "conductor.lost"]);
    expect(seen[2]!.at - seen[1]!.at).toBeLessThan(6_000);
    hub.close();
  });
});
