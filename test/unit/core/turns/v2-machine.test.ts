// The turn machine fed with event streams recorded from the real opencode 2.x server (`npm run
// record -- --v2`), never hand-made ones: for each way a 2.x execution ends, the machine must end
// the turn at the outcome event with the verdict that opencode recorded (the session's messages
// read once it settled), also for two prompts answered by one execution.
import type { TurnVerdict } from "../../../../src/core/model/turn-outcome.js";
import { describe, expect, it } from "vitest";
import type { V2Event } from "../../../../src/client/v2/event-framing.js";
import { TurnMachine } from "../../../../src/core/turns/machine.js";
import { recordedMessagesV2, V2_MACHINE_OPTIONS, V2TurnEvents, type V2MessageRecord } from "../../../../src/core/engine/v2/v2-events.js";
import { isEventStream, loadV2Fixture, type V2ScenarioName } from "../../../support/fixture.js";

interface Recorded {
  sessionId: string;
  events: V2Event[];
  /** The user message ids our prompts got, in order (the prompt responses). */
  prompts: string[];
  /** The session's messages as read after the outcome: what opencode recorded. */
  final: V2MessageRecord[];
}

function recorded(name: V2ScenarioName): Recorded {
  const fixture = loadV2Fixture(name);
  const created = fixture.interactions.find((i) => i.operationId?.endsWith("session.create"))!.body as { data: { id: string } };
  const stream = fixture.interactions.find((i) => isEventStream(i.contentType))!;
  const prompts = fixture.interactions.filter((i) => i.operationId?.endsWith("session.prompt")).map((i) => (i.body as { data: { id: string } }).data.id);
  const final = (fixture.interactions.findLast((i) => i.operationId?.endsWith("message.list"))!.body as { data: V2MessageRecord[] }).data;
  return { sessionId: created.data.id, events: stream.events!.map((e) => e.data as V2Event), prompts, final };
}

/** Feeds the recorded events in order; returns the verdict and the event that decided it. */
function run(r: Recorded, after?: string) {
  const machine = new TurnMachine(after, V2_MACHINE_OPTIONS);
  const translate = new V2TurnEvents(r.sessionId);
  for (const [i, event] of r.events.entries()) {
    for (const t of translate.translate(event)) if (machine.apply(t)) return { verdict: machine.verdict!, decidedBy: r.events[i]!, machine };
  }
  return { verdict: machine.verdict, decidedBy: undefined, machine };
}

/** The verdict a fresh machine reaches from a read of the session once it was idle. */
function fromRead(r: Recorded, after?: string): TurnVerdict | undefined {
  return new TurnMachine(after, V2_MACHINE_OPTIONS).resync({ activity: "idle", messages: recordedMessagesV2(r.final) });
}

const withoutReason = (v: TurnVerdict | undefined) => (v?.error ? { ...v, error: (({ reason: _reason, ...rest }) => rest)(v.error) } : v);

const cases: Array<[V2ScenarioName, string, { status: string; error?: Record<string, unknown> }]> = [
  ["text-turn", "session.execution.succeeded", { status: "done" }],
  ["write-turn", "session.execution.succeeded", { status: "done" }],
  ["permission", "session.execution.succeeded", { status: "done" }],
  ["question", "session.execution.succeeded", { status: "done" }], // a form answered
  ["steer", "session.execution.succeeded", { status: "done" }],
  // A background sub-agent's notice joined the execution; the child's own outcome is not the parent's.
  ["subagent-notice", "session.execution.succeeded", { status: "done" }],
  [
    "http-400",
    "session.execution.failed",
    { status: "error", error: { name: "provider.invalid-request", statusCode: 400, message: expect.stringContaining("HTTP 400") } },
  ],
  ["interrupt", "session.execution.interrupted", { status: "interrupted", error: { name: "aborted", message: "Step interrupted", reason: "user" } }],
  [
    "permission-rejected",
    "session.execution.interrupted",
    { status: "interrupted", error: { name: "aborted", message: "Step interrupted", reason: "shutdown" } },
  ],
];

describe("TurnMachine on recorded 2.x executions", () => {
  it.each(cases)("%s: ends at %s with %o, as the message read says", (name, outcome, expected) => {
    const r = recorded(name);
    const { verdict, decidedBy } = run(r);
    expect(decidedBy?.type).toBe(outcome);
    expect(verdict).toMatchObject(expected);
    // The read knows everything but the interruption's reason, which only the outcome event states.
    expect(fromRead(r)).toEqual(withoutReason(verdict));
  });

  it("http-400: the error is opencode's, with its type as the name and its status", () => {
    const r = recorded("http-400");
    const failed = r.events.find((e) => e.type === "session.execution.failed")!.data.error as { type: string; message: string; status: number };
    expect(run(r).verdict).toEqual({ status: "error", error: { name: failed.type, message: failed.message, statusCode: failed.status } });
  });

  it("steer: one outcome ends the turn of both prompts; the first one's tool step and the later prompt do not", () => {
    const r = recorded("steer");
    expect(r.prompts).toHaveLength(2);
    // The newest message before the second prompt was sent: the first prompt's tool step.
    const beforeSecond = r.final[r.final.findIndex((m) => m.id === r.prompts[1]) - 1]!.id;
    for (const after of [undefined, beforeSecond]) {
      const { verdict, decidedBy } = run(r, after);
      expect(decidedBy?.type).toBe("session.execution.succeeded");
      expect(verdict).toEqual({ status: "done" });
      expect(fromRead(r, after)).toEqual({ status: "done" });
    }
  });

  it("an outcome that comes before our user message is an earlier execution's, not ours", () => {
    const r = recorded("text-turn");
    const { verdict, machine } = run(r, r.final.at(-1)!.id); // our prompt comes after all of this
    expect(verdict).toBeUndefined();
    expect(machine.phase).toBe("waiting");
  });

  it("events of other sessions are not translated", () => {
    const r = recorded("text-turn");
    const translate = new V2TurnEvents("ses_other");
    expect(r.events.flatMap((e) => translate.translate(e))).toEqual([]);
  });
});
