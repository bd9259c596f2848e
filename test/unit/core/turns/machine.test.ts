// The turn machine fed with event streams recorded from the real opencode 1.18.33 (`npm run record`),
// never hand-made ones: for each way a turn ends, the machine must reach the outcome that opencode
// recorded (the session's messages read once it settled), and must not decide at the first idle of
// a failed turn, which comes before the error lands on the message.
import { describe, expect, it } from "vitest";
import type { HubEvent } from "../../../../src/core/event-hub.js";
import { recordedVerdict } from "../../../../src/core/turns/summary.js";
import type { Message } from "../../../../src/core/model/message.js";
import { TurnMachine } from "../../../../src/core/turns/machine.js";
import { V1TurnEvents } from "../../../../src/core/engine/v1/v1-events.js";
import { readFileSync } from "node:fs";
import { streamEvents } from "../../../../src/client/event-stream.js";
import { fixtureDirFor, fixturePath, loadFixture, type Fixture, type ScenarioName } from "../../../support/fixture.js";

interface Recorded {
  sessionId: string;
  events: HubEvent[];
  /** The session's messages as read after the turn settled: what opencode recorded. */
  final: Message[];
}

function recorded(name: ScenarioName): Recorded {
  const fixture = loadFixture(name);
  const created = fixture.interactions.find((i) => i.operationId === "session.create")!.body as { id: string };
  const stream = fixture.interactions.find((i) => i.operationId === "global.event")!;
  const events = stream.events!.map((e) => (e.data as { payload: HubEvent }).payload);
  const final = fixture.interactions.findLast((i) => i.operationId === "session.messages")!.body as Message[];
  return { sessionId: created.id, events, final };
}

/** Feeds the recorded events in order; returns the verdict and the index of the event that decided it. */
function run(r: Recorded, upTo = r.events.length) {
  const machine = new TurnMachine(undefined);
  const translate = new V1TurnEvents(r.sessionId);
  for (let i = 0; i < upTo; i++) {
    const event = translate.translate(r.events[i]!);
    if (event && machine.apply(event)) return { verdict: machine.verdict!, at: i, machine };
  }
  return { verdict: machine.verdict, at: -1, machine };
}

const firstIdle = (r: Recorded) => r.events.findIndex((e) => e.type === "session.idle" && e.properties.sessionID === r.sessionId);

const cases: Array<[ScenarioName, { status: string; error?: Record<string, unknown> }]> = [
  ["text-turn", { status: "done" }],
  ["tool-turn", { status: "done" }],
  ["permission", { status: "done" }],
  ["retry-failure", { status: "error", error: { name: "APIError", statusCode: 429 } }],
  ["end-error-400", { status: "error", error: { name: "APIError", statusCode: 400, message: "Bad request" } }],
  ["end-error-401", { status: "error", error: { name: "APIError", statusCode: 401 } }],
  ["end-429-fast", { status: "error", error: { name: "APIError", statusCode: 429 } }],
  ["end-500-fast", { status: "error", error: { name: "APIError", statusCode: 500 } }],
  ["end-unknown-model", { status: "error", error: { name: "UnknownError", message: "Model not found: fake/nope." } }],
  ["end-abort-stream", { status: "interrupted", error: { name: "MessageAbortedError" } }],
  // opencode recorded no error for an abort during a retry wait: none is reported.
  ["end-abort-retry", { status: "interrupted" }],
  ["end-permission-rejected", { status: "interrupted", error: { name: "ToolStopped" } }],
  ["end-question-rejected", { status: "interrupted", error: { name: "ToolStopped", message: "The user dismissed this question" } }],
  // opencode compacted the session midway and carried the turn on: it ends done, not at the tool call.
  ["compaction-turn", { status: "done" }],
  // Its summary call failed (HTTP 400): the failed summary is the last reply, not the tool call before it.
  ["compaction-error-400", { status: "error", error: { name: "APIError", statusCode: 400 } }],
];

describe("TurnMachine on recorded turns", () => {
  it.each(cases)("%s ends %o", (name, expected) => {
    const r = recorded(name);
    const { verdict } = run(r);
    expect(verdict).toMatchObject(expected);
    if (!expected.error) expect(verdict?.error).toBeUndefined();
    // The same outcome as a read of what opencode recorded (unknown model: no reply to read).
    if (name !== "end-unknown-model") expect(recordedVerdict(r.final)).toEqual(verdict);
  });

  it.each(cases.filter(([name]) => /error|429|500|retry-failure/.test(name)))("%s: the first idle alone does not end the turn", (name) => {
    const r = recorded(name);
    const idle = firstIdle(r);
    expect(idle).toBeGreaterThan(0);
    const early = run(r, idle + 1);
    expect(early.verdict).toBeUndefined();
    expect(early.machine.phase).toBe("settling"); // idle, the reply not terminal yet: the watcher re-reads
    expect(run(r).at).toBeGreaterThan(idle);
  });

  it("an idle that comes before our user message is not the end of our turn", () => {
    const r = recorded("text-turn");
    const machine = new TurnMachine(undefined);
    const translate = new V1TurnEvents(r.sessionId);
    // The turn's own recorded session.idle, delivered first (as the idle of an abort of the idle session would be).
    const idle = r.events.find((e) => e.type === "session.idle")!;
    expect(machine.apply(translate.translate(idle)!)).toBeUndefined();
    expect(machine.phase).toBe("waiting");
    for (const e of r.events) {
      const t = translate.translate(e);
      if (t) machine.apply(t);
    }
    expect(machine.verdict).toEqual({ status: "done" });
  });

  it("end-unknown-agent: a prompt opencode accepted and never ran leaves the machine waiting until the watch gives up", () => {
    const r = recorded("end-unknown-agent");
    const { verdict, machine } = run(r);
    // Only the two session errors: no user message, no status, no idle. Nothing here can end the turn.
    expect(verdict).toBeUndefined();
    expect(machine.phase).toBe("waiting");
    expect(machine.started).toBe(false);
    // The re-read (idle, no message) does not decide either: a prompt may be a moment from starting.
    expect(machine.resync({ activity: "idle", messages: [] })).toBeUndefined();
    expect(r.final).toEqual([]);
    // The watch's re-reads ran out: what opencode said about it is the outcome.
    expect(machine.giveUp({ name: "TurnLost", message: "nothing recorded" })).toMatchObject({
      status: "error",
      error: { name: "UnknownError", message: expect.stringContaining('Agent not found: "nope-agent"') },
    });
  });

  it("compaction-turn: the compaction and its Continue are part of the turn; it ends at the idle after the carried-on reply", () => {
    const r = recorded("compaction-turn");
    const { verdict, at } = run(r);
    expect(verdict).toEqual({ status: "done" });
    // Not before the reply to opencode's Continue completed: the last completed assistant message is that reply.
    const carried = r.final.at(-1)!;
    const completedAt = r.events.findLastIndex(
      (e) =>
        e.type === "message.updated" &&
        e.properties.info.id === carried.info.id &&
        e.properties.info.role === "assistant" &&
        e.properties.info.time.completed !== undefined,
    );
    expect(completedAt).toBeGreaterThan(0);
    expect(at).toBeGreaterThanOrEqual(completedAt);
    // The machine's turn is the prompt's; read back, the messages say the same.
    expect(run(r).machine.turnMessageId).toBe(r.final[0]!.info.id);
    expect(recordedVerdict(r.final)).toEqual({ status: "done" });
  });

  it("a lost server ends the turn as lost, whatever came before", () => {
    const r = recorded("end-abort-retry");
    const half = run(r, firstIdle(r) - 1).machine;
    expect(half.verdict).toBeUndefined();
    expect(half.apply({ type: "lost", error: { name: "ServerLost", message: "gone" } })).toEqual({
      status: "lost",
      error: { name: "ServerLost", message: "gone" },
    });
  });
});

describe("TurnMachine on a release before 1.14 (1.1.65's recorded text turn)", () => {
  // 1.1.65 names a message's session only in `info.sessionID` (docs/opencode-behaviour.md §2). Read
  // through the client's 1.x framing, its events end the turn at the idle; fed without it, the
  // machine saw no message and the turn ended only at the quiet re-read, 10 s later.
  const fixture = JSON.parse(readFileSync(fixturePath("text-turn", fixtureDirFor("1.1.65")), "utf8")) as Fixture;
  const sessionId = (fixture.interactions.find((i) => i.operationId === "session.create")!.body as { id: string }).id;
  const frames = fixture.interactions.find((i) => i.operationId === "global.event")!.events!.map((e) => `data: ${JSON.stringify(e.data)}\n\n`);
  const final = fixture.interactions.findLast((i) => i.operationId === "session.messages")!.body as Message[];

  async function framed(): Promise<HubEvent[]> {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const frame of frames) controller.enqueue(new TextEncoder().encode(frame));
        controller.close();
      },
    });
    const events: HubEvent[] = [];
    for await (const event of streamEvents(async () => body, { reconnect: false })) events.push(event);
    return events;
  }

  it("the recording has the old shape: message.updated without properties.sessionID", () => {
    expect(fixture.opencodeVersion).toBe("1.1.65");
    const updated = fixture.interactions.find((i) => i.operationId === "global.event")!.events!.map((e) => (e.data as { payload: HubEvent }).payload);
    const messages = updated.filter((e) => e.type === "message.updated");
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.every((e) => !("sessionID" in e.properties))).toBe(true);
  });

  it("ends done at the session's idle, as opencode recorded it", async () => {
    const events = await framed();
    const machine = new TurnMachine(undefined);
    const translate = new V1TurnEvents(sessionId);
    let at = -1;
    events.forEach((event, i) => {
      const t = translate.translate(event);
      if (t && machine.apply(t) && at < 0) at = i;
    });
    expect(machine.verdict).toEqual({ status: "done" });
    expect(recordedVerdict(final)).toEqual(machine.verdict);
    expect(events[at]).toMatchObject({ type: expect.stringMatching(/^session\.(status|idle)$/), properties: { sessionID: sessionId } });
  });
});
