// The messages a 2.x watch rebuilds from the durable events (engine/v2/v2-seen-turn.ts) against the
// messages the real server returned at the end of the same recorded scenario (`npm run record --
// --v2`): the summary the conductor gives at the outcome event must be the one it would have read.
// The decline cases cut or reorder a recorded stream, as a dropped connection would.
import { describe, expect, it } from "vitest";
import type { V2Event } from "../../../../src/client/v2/event-framing.js";
import { messagesFromV2 } from "../../../../src/core/engine/v2/v2-messages.js";
import { V2Signals } from "../../../../src/core/engine/v2/v2-signals.js";
import { summarizeTurn } from "../../../../src/core/turns/summary.js";
import { loadV2Session, V2_SCENARIOS, type V2ScenarioName } from "../../../support/fixture.js";

const recorded = loadV2Session;

function replay(name: V2ScenarioName, edit: (events: V2Event[]) => V2Event[] = (e) => e) {
  const r = recorded(name);
  const translator = new V2Signals(r.sessionId, r.directory);
  const followed = new Set([r.sessionId]);
  for (const event of edit(r.events)) translator.translate({ type: "v2.event", properties: event }, followed);
  return { r, translator };
}

/** Scenarios whose every durable event the rebuild maps (a compaction it does not: see below). */
const REBUILT = V2_SCENARIOS.filter((name) => name !== "compaction-failed");

describe("a 2.x turn's messages rebuilt from its durable events", () => {
  it.each(REBUILT)("%s: equal to the messages the server returned, and so is the summary", (name) => {
    const { r, translator } = replay(name);
    expect(translator.seen.reason).toBeUndefined();
    const fromEvents = translator.turnMessages()!;
    const fromServer = messagesFromV2(r.final, r.sessionId, r.directory);
    expect(fromEvents).toEqual(fromServer);
    const summary = (messages: typeof fromEvents) => summarizeTurn({ sessionId: r.sessionId, messages, outcome: "idle", pending: [] });
    expect(summary(fromEvents)).toEqual(summary(fromServer));
  });

  it("declines on an automatic compaction, whose failure the summary of the server's messages reports as opencode recorded it", () => {
    const { r, translator } = replay("compaction-failed");
    expect(translator.turnMessages()).toBeUndefined();
    expect(translator.seen.reason).toBe("event session.compaction.started");
    // What the watch reads instead: the compaction that failed ends the turn, with its error.
    const compaction = r.final.find((m) => m.type === "compaction") as { status?: string; error?: { type: string; message: string } } | undefined;
    expect(compaction?.status).toBe("failed");
    const summary = summarizeTurn({ sessionId: r.sessionId, messages: messagesFromV2(r.final, r.sessionId, r.directory), outcome: "idle", pending: [] });
    expect([summary.status, summary.error?.name, summary.error?.message]).toEqual(["error", compaction!.error!.type, compaction!.error!.message]);
  });

  it("declines while the execution runs: nothing is vouched for before its outcome, but what was seen is there for a lost turn", () => {
    const { r, translator } = replay("write-turn", (events) => events.filter((e) => e.type !== "session.execution.succeeded"));
    expect(translator.turnMessages()).toBeUndefined();
    // Every step had ended when the outcome was cut: what was seen equals the server's record.
    expect(translator.turnMessages({ partial: true })).toEqual(messagesFromV2(r.final, r.sessionId, r.directory));
  });

  it("declines when a durable event is missing (its number skipped)", () => {
    const { translator } = replay("write-turn", (events) => {
      const drop = events.findIndex((e) => e.type === "session.text.ended");
      return events.filter((_, i) => i !== drop);
    });
    expect(translator.turnMessages()).toBeUndefined();
    expect(translator.seen.reason).toMatch(/missed/);
  });

  it("declines when the watch joined a running execution (its start not seen)", () => {
    const { translator } = replay("steer", (events) => {
      const second = events.findLastIndex((e) => e.type === "session.input.admitted");
      return events.slice(second);
    });
    expect(translator.turnMessages()).toBeUndefined();
  });

  it("declines after a reconnect, whatever follows", () => {
    const r = recorded("text-turn");
    const translator = new V2Signals(r.sessionId, r.directory);
    const followed = new Set([r.sessionId]);
    const half = Math.floor(r.events.length / 2);
    for (const event of r.events.slice(0, half)) translator.translate({ type: "v2.event", properties: event }, followed);
    translator.translate({ type: "conductor.reconnected", properties: {} } as never, followed);
    for (const event of r.events.slice(half)) translator.translate({ type: "v2.event", properties: event }, followed);
    expect(translator.turnMessages()).toBeUndefined();
    expect(translator.seen.reason).toBe("reconnected");
  });

  it("declines on a durable event of a kind it does not map", () => {
    const { translator } = replay("text-turn", (events) => {
      const at = events.findIndex((e) => e.type === "session.step.ended");
      return events.map((e, i) => (i === at ? { ...e, type: "session.step.reshaped" } : e));
    });
    expect(translator.turnMessages()).toBeUndefined();
    expect(translator.seen.reason).toMatch(/session\.step\.reshaped/);
  });

  it("is not disturbed by another session's events interleaved with its own", () => {
    const other = recorded("steer").events.map((e) => ({
      ...e,
      data: { ...e.data, sessionID: "ses_other" },
      ...(e.durable ? { durable: { ...e.durable, aggregateID: "ses_other" } } : {}),
    }));
    const { r, translator } = replay("text-turn", (events) => events.flatMap((e, i) => (other[i] ? [e, other[i]!] : [e])));
    expect(translator.turnMessages()).toEqual(messagesFromV2(r.final, r.sessionId, r.directory));
  });
});
