// The live parts a console streams (engine/live-parts.ts) against what the real 2.x server returned
// at the end of each recorded scenario (`npm run record -- --v2`): applied in order the way the page
// applies them (a whole part replaces the one with its id or is added; a delta grows its part's
// text), they must end as the session's messages read afterwards, same ids, same shapes. And what
// the server-wide reading of the events (engine/server-events.ts) finds in the same recordings.
import { describe, expect, it } from "vitest";
import type { V2Event } from "../../../../src/client/v2/event-framing.js";
import { LiveParts, type LivePart } from "../../../../src/core/engine/live-parts.js";
import { activityOf, requestChangeOf } from "../../../../src/core/engine/server-events.js";
import { messagesFromV2, type V2Message } from "../../../../src/core/engine/v2/v2-messages.js";
import type { HubEvent } from "../../../../src/core/engine/hub-events.js";
import { isEventStream, loadFixture, loadV2Fixture, V2_SCENARIOS, type V2ScenarioName } from "../../../support/fixture.js";

function recorded(name: V2ScenarioName) {
  const fixture = loadV2Fixture(name);
  const created = fixture.interactions.find((i) => i.operationId?.endsWith("session.create"))!.body as { data: { id: string } };
  const stream = fixture.interactions.find((i) => isEventStream(i.contentType))!;
  const final = (fixture.interactions.findLast((i) => i.operationId?.endsWith("message.list"))!.body as { data: V2Message[] }).data;
  const events: HubEvent[] = stream.events!.map((e) => ({ type: "v2.event", properties: e.data as V2Event }));
  return { sessionId: created.data.id, events, final };
}

type Shown = { id: string; type: string; text?: string; tool?: string; status?: string; input?: unknown };

function shown(part: Record<string, unknown>): Shown | undefined {
  if (part.type === "text" || part.type === "reasoning") return { id: String(part.id), type: String(part.type), text: String(part.text) };
  if (part.type !== "tool") return undefined;
  const state = part.state as { status: string; input: unknown };
  return { id: String(part.id), type: "tool", tool: String(part.tool), status: state.status, input: state.input };
}

/** What a page that saw every event from the start shows. */
function applied(live: LivePart[]): Shown[] {
  let out: Shown[] = [];
  for (const l of live) {
    if ("delta" in l) out = out.map((p) => (p.id === l.delta.partID ? { ...p, text: (p.text ?? "") + l.delta.delta } : p));
    else {
      const view = shown(l.part as never);
      if (!view) continue;
      out = out.some((p) => p.id === view.id) ? out.map((p) => (p.id === view.id ? view : p)) : [...out, view];
    }
  }
  return out;
}

function stream(name: V2ScenarioName, edit: (events: HubEvent[]) => HubEvent[] = (e) => e) {
  const r = recorded(name);
  const parts = new LiveParts();
  const live = edit(r.events).flatMap((event) => parts.translate(event, (id) => id === r.sessionId));
  const read = messagesFromV2(r.final, r.sessionId, "").flatMap((m) => m.parts.flatMap((p) => shown(p as never) ?? []));
  return { r, live, read };
}

describe("live parts of a 2.x session", () => {
  it.each(V2_SCENARIOS)("%s: applied as the page applies them, they end as the session read afterwards", (name) => {
    const { live, read } = stream(name);
    expect(read.length).toBeGreaterThan(0);
    expect(applied(live)).toEqual(read);
  });

  it("text grows by deltas of the part already sent, under the id the read gives it", () => {
    const { live, read } = stream("text-turn");
    const deltas = live.filter((l) => "delta" in l);
    expect(deltas.length).toBeGreaterThan(0);
    const answer = read.findLast((p) => p.type === "text")!;
    for (const d of deltas) expect("delta" in d && d.delta.partID).toBe(answer.id);
    // The prompt is the user's, the answer the agent's.
    expect(live.filter((l) => "part" in l).map((l) => "part" in l && l.role)).toContain("user");
  });

  it("streams nothing of a step already under way when following began, rather than parts under wrong ids", () => {
    const { live } = stream("write-turn", (events) =>
      events.slice(events.findIndex((e) => e.type === "v2.event" && e.properties.type === "session.text.started")),
    );
    expect(live).toEqual([]);
  });

  it("after a reconnect, streams again from the next step on", () => {
    const { live, read } = stream("permission", (events) => {
      const second = events.findLastIndex((e) => e.type === "v2.event" && e.properties.type === "session.step.started");
      return [...events.slice(0, second - 1), { type: "conductor.reconnected", properties: { attempt: 1, downtimeMs: 10 } }, ...events.slice(second - 1)];
    });
    const last = read.at(-1)!;
    expect(applied(live).at(-1)).toEqual(last);
  });

  it("streams only the sessions asked for", () => {
    const r = recorded("text-turn");
    const parts = new LiveParts();
    expect(r.events.flatMap((event) => parts.translate(event, () => false))).toEqual([]);
  });
});

describe("what a server's events say about any session", () => {
  const v2Changes = (name: V2ScenarioName) => {
    const r = recorded(name);
    return { r, activity: r.events.flatMap((e) => activityOf(e) ?? []), requests: r.events.flatMap((e) => requestChangeOf(e) ?? []) };
  };

  it("2.x: a run starts busy and ends with its stated outcome", () => {
    expect(v2Changes("text-turn").activity.map((a) => a.state)).toEqual(["busy", "busy", "ended"]);
    expect(v2Changes("text-turn").activity[1]).toMatchObject({ state: "busy", step: true });
    expect(v2Changes("http-400").activity.at(-1)).toMatchObject({ state: "ended", outcome: "failed" });
    expect(v2Changes("interrupt").activity.at(-1)).toMatchObject({ state: "ended", outcome: "interrupted" });
  });

  it("2.x: a permission and a question (a form) asked, then answered", () => {
    const permission = v2Changes("permission");
    expect(permission.requests).toEqual([
      { kind: "asked", request: expect.objectContaining({ kind: "permission", id: expect.stringMatching(/^per_/), sessionId: permission.r.sessionId }) },
      { kind: "answered", id: (permission.requests[0] as { request: { id: string } }).request.id },
    ]);
    const question = v2Changes("question");
    expect(question.requests).toEqual([
      { kind: "asked", request: expect.objectContaining({ kind: "question", id: expect.stringMatching(/^frm_/), sessionId: question.r.sessionId }) },
      { kind: "answered", id: (question.requests[0] as { request: { id: string } }).request.id },
    ]);
  });

  it("1.x: the same, from the 1.x events (session.status, permission.asked/replied)", () => {
    const stream = loadFixture("permission").interactions.find((i) => isEventStream(i.contentType))!;
    // As the 1.x client hands them on: the global event's payload, with its directory.
    const events = stream.events!.map((e) => {
      const { payload, directory } = e.data as { payload: HubEvent; directory?: string };
      return { ...payload, directory } as HubEvent;
    });
    const requests = events.flatMap((e) => requestChangeOf(e) ?? []);
    expect(requests.map((r) => r.kind)).toEqual(["asked", "answered"]);
    expect(requests[0]).toMatchObject({ request: { kind: "permission", permission: "bash" } });
    const states = events.flatMap((e) => activityOf(e) ?? []).map((a) => a.state);
    expect(states[0]).toBe("busy");
    expect(states.at(-1)).toBe("idle");
  });
});
