// Routing events by session before they are parsed (client/event-sessions.ts, the hub's `follows`),
// on every event opencode sent in the recordings of both majors:
// - the sessions read from an event's raw text are the ones its parsed JSON names, no more, no less;
// - a stream whose consumer follows another session drops that session's events unparsed, and
//   still yields what names no session (server notices);
// - a hub listener that follows a session hears every event of it the hub read, and none of another's.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sessionsNamedIn } from "../../../src/client/event-sessions.js";
import { streamEvents } from "../../../src/client/event-stream.js";
import { EventHub, type HubEvent } from "../../../src/core/event-hub.js";
import { FIXTURE_DIR, v2FixtureDir, type Fixture } from "../../support/fixture.js";

const KEYS = new Set(["sessionID", "parentID", "aggregateID", "id"]);

/** The session ids a parsed event holds under the keys opencode puts them in, found by walking it. */
function walked(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) walked(v, into);
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) {
      if (KEYS.has(k) && typeof v === "string" && v.startsWith("ses")) into.add(v);
      else walked(v, into);
    }
  return into;
}

function recordedStreams(dir: string): Array<{ name: string; events: string[] }> {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .flatMap((f) => {
      const fixture = JSON.parse(readFileSync(join(dir, f), "utf8")) as Fixture;
      return (fixture.interactions ?? []).filter((i) => i.events).map((i) => ({ name: f, events: i.events!.map((e) => JSON.stringify(e.data)) }));
    });
}

const streams = [...recordedStreams(FIXTURE_DIR), ...recordedStreams(v2FixtureDir())];

function sse(events: string[]): ReadableStream<Uint8Array> {
  const text = events.map((e) => `data: ${e}\n\n`).join("");
  return new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });
}

/** Reads one recorded stream to its end (no reconnect), through the stream's `wanted` hook. */
async function read(events: string[], wanted?: (sessions: readonly string[]) => boolean): Promise<string[]> {
  const out: string[] = [];
  const parse = (m: { data: string }) => JSON.parse(m.data) as { type: string };
  for await (const event of streamEvents(async () => sse(events), { reconnect: false, ...(wanted ? { wanted } : {}) }, parse)) out.push(JSON.stringify(event));
  return out;
}

describe("sessions named by an event's raw text", () => {
  it("are the ones its parsed JSON names, on every recorded event of both majors", () => {
    let named = 0;
    for (const { events } of streams)
      for (const raw of events) {
        const ids = sessionsNamedIn(raw);
        expect(new Set(ids)).toEqual(walked(JSON.parse(raw)));
        if (ids.length > 0) named += 1;
      }
    expect(named).toBeGreaterThan(100);
  });

  it("a stream following another session drops every event of the recorded one, and keeps the rest", async () => {
    for (const { events } of streams) {
      const all = await read(events);
      const kept = await read(events, (ids) => ids.includes("ses_somebody_else"));
      expect(kept).toEqual(all.filter((e) => sessionsNamedIn(e).length === 0));
      expect(await read(events, (ids) => ids.includes("ses_0001"))).toEqual(
        all.filter((e) => sessionsNamedIn(e).length === 0 || sessionsNamedIn(e).includes("ses_0001")),
      );
    }
  });
});

describe("the hub's routing by session", () => {
  it("a listener hears every event of the session it follows and none of another's", async () => {
    for (const { name, events } of streams.filter((s) => s.name.endsWith(".json") && s.events.some((e) => sessionsNamedIn(e).includes("ses_0001")))) {
      const parse = (m: { data: string }) => {
        const data = JSON.parse(m.data) as { payload?: HubEvent };
        return data.payload ?? ({ type: "v2.event", properties: data } as unknown as HubEvent);
      };
      let ended!: () => void;
      const done = new Promise<void>((resolve) => (ended = resolve));
      const hub = new EventHub({
        url: "http://hub.invalid",
        health: async () => ({ healthy: true, version: "test" }),
        events: async function* (o) {
          yield { type: "server.connected", properties: {} } as HubEvent;
          yield* streamEvents(async () => sse(events), { ...o, reconnect: false }, parse);
          ended();
        },
      });
      const everything: HubEvent[] = [];
      const mine: HubEvent[] = [];
      const other: HubEvent[] = [];
      const stops = await Promise.all([
        hub.subscribe((e) => everything.push(e)),
        hub.subscribe(
          (e) => mine.push(e),
          undefined,
          (id) => id === "ses_0001",
        ),
        hub.subscribe(
          (e) => other.push(e),
          undefined,
          (id) => id === "ses_somebody_else",
        ),
      ]);
      await done;
      const names = (e: HubEvent) => sessionsNamedIn(JSON.stringify(e));
      expect(mine, name).toEqual(everything.filter((e) => names(e).length === 0 || names(e).includes("ses_0001")));
      expect(other, name).toEqual(everything.filter((e) => names(e).length === 0));
      expect(mine.length, name).toBeGreaterThan(other.length);
      for (const stop of stops) stop();
      hub.close();
    }
  });
});
