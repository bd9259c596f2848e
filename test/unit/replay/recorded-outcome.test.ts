// The small pure function the tests derive expected outcomes with (test/support/recorded-outcome.ts),
// on the recordings themselves: each way a 1.x turn ends, as opencode recorded it (its messages,
// its events), gets the status a truthful report gives; and every recorded tool call's derived
// answer agrees with what the live call answered when it was recorded (so a recording whose
// stored answer is wrong, by a bug at record time or by hand, fails here).
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FIXTURE_DIR, loadFixture } from "../../support/fixture.js";
import { recordedCallOutcome, sessionAsTold, TURN_TOOLS, turnOutcome, turnOutcomeV2 } from "../../support/recorded-outcome.js";
import { expectStoredAnswerAsRecorded } from "../../support/tool-replay.js";

/** The one session of a client recording, as opencode told it by the end. */
function endOf(name: string) {
  const fixture = loadFixture(name);
  const created = fixture.interactions.find((i) => i.method === "POST" && i.path === "/session" && i.status === 200)!.body as { id: string };
  const told = sessionAsTold(fixture, created.id, Infinity);
  return turnOutcome(told.messages, told.facts);
}

describe("the outcome of a 1.x turn, from what opencode recorded", () => {
  it.each([
    ["text-turn", { status: "done", answer: "Hello from scripted." }],
    ["tool-turn", { status: "done" }],
    // Compacted by opencode midway: the reply to its Continue ends the one turn.
    ["compaction-turn", { status: "done", answer: "All done after the compaction." }],
    // Its summary call failed: the error on the summary ends the turn.
    ["compaction-error-400", { status: "error", error: { name: "APIError", statusCode: 400 } }],
    ["end-error-400", { status: "error", error: { name: "APIError", statusCode: 400 } }],
    ["end-error-401", { status: "error", error: { name: "APIError", statusCode: 401 } }],
    ["end-429-fast", { status: "error", error: { name: "APIError", statusCode: 429 } }],
    ["end-500-fast", { status: "error", error: { name: "APIError", statusCode: 500 } }],
    ["end-abort-stream", { status: "interrupted", error: { name: "MessageAbortedError" } }],
    // Aborted during a retry wait: the reply completes with no error and no finish reason.
    ["end-abort-retry", { status: "interrupted", answer: "" }],
    [
      "end-permission-rejected",
      { status: "interrupted", error: { name: "ToolStopped", message: "The user rejected permission to use this specific tool call." } },
    ],
    ["end-question-rejected", { status: "interrupted", error: { name: "ToolStopped", message: "The user dismissed this question" } }],
    // No message at all: only the session's errors.
    [
      "end-unknown-agent",
      {
        status: "error",
        error: { name: "UnknownError", message: 'Agent not found: "nope-agent". Available agents: build, explore, general, plan' },
        replies: 0,
      },
    ],
  ])("%s: %o", (name, expected) => {
    expect(endOf(name)).toMatchObject(expected);
  });

  it("blocked while a request is pending, running while the reply is not complete, budget_exceeded past a cap", () => {
    const user = { info: { id: "msg_1", role: "user" }, parts: [] };
    const reply = (completed?: number) => ({
      info: { id: "msg_2", role: "assistant", finish: "stop", tokens: { total: 120 }, time: { created: 1, ...(completed ? { completed } : {}) } },
      parts: [{ id: "prt_1", type: "text", text: "hi" }],
    });
    expect(turnOutcome([user, reply()], { idle: false, pending: true }).status).toBe("blocked");
    expect(turnOutcome([user, reply()], { idle: false }).status).toBe("running");
    expect(turnOutcome([user, reply(2)], { idle: true })).toMatchObject({ status: "done", answer: "hi", tokens: 120 });
    expect(turnOutcome([user, reply(2)], { idle: true, maxTokens: 100 }).status).toBe("budget_exceeded");
    expect(turnOutcome([user, reply(2)], { idle: true, promptNotYetShown: true }).status).toBe("running");
  });
});

describe("the outcome of a 2.x turn, from what opencode recorded", () => {
  it("done, error with the step's type and status, interrupted as `aborted`", () => {
    const user = { id: "u", type: "user" };
    expect(
      turnOutcomeV2([user, { id: "a", type: "assistant", time: { completed: 2 }, content: [{ type: "text", text: "ok" }] }], { idle: true }),
    ).toMatchObject({
      status: "done",
      answer: "ok",
    });
    expect(turnOutcomeV2([user, { id: "a", type: "assistant", error: { type: "provider.auth", status: 401 } }], { idle: true })).toMatchObject({
      status: "error",
      error: { name: "provider.auth", statusCode: 401 },
    });
    expect(turnOutcomeV2([user, { id: "a", type: "assistant", error: { type: "aborted" } }], { idle: true }).status).toBe("interrupted");
    expect(turnOutcomeV2([user, { id: "a", type: "assistant" }], { idle: false }).status).toBe("running");
  });
});

const toolRecordings = readdirSync(`${FIXTURE_DIR}/tools`).map((f) => `tools/${f.replace(/\.json$/, "")}`);
const recordedCalls = toolRecordings.flatMap((name) => (loadFixture(name).calls ?? []).map((call, index) => ({ name, index, call })));

describe("every recorded tool call: what opencode recorded, and what the live call answered", () => {
  it.each(recordedCalls.map((c) => [`${c.name} #${c.index} ${c.call.tool}`, c] as const))("%s agree", (_label, { name, index }) => {
    expectStoredAnswerAsRecorded(loadFixture(name), index);
  });

  it("derives a status for every recorded turn-tool call that was not an error", () => {
    const turnCalls = recordedCalls.filter((c) => TURN_TOOLS.has(c.call.tool) && !c.call.recorded.isError);
    expect(turnCalls.length).toBeGreaterThan(20);
    for (const c of turnCalls) expect(recordedCallOutcome(loadFixture(c.name), c.index).outcome, `${c.name} #${c.index}`).toBeDefined();
  });
});
