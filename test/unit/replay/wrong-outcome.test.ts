// A wrong expected outcome cannot pass a tool's unit test. Three ways to be wrong, each on the
// real oc_delegate row of delegate-done (a turn that opencode recorded as done) and each run through
// the very checks the tools' tests use (test/support/tool-replay.ts):
// - the row claims an answer opencode did not record;
// - the recording's stored answer (what the live call answered) says another status;
// - opencode's record says something else (its reply failed): the tool's done no longer matches.
import { describe, expect, it } from "vitest";
import { loadFixture, type Fixture } from "../../support/fixture.js";
import { expectAsRecorded, expectRecordedRow, expectStoredAnswerAsRecorded, useToolReplay } from "../../support/tool-replay.js";

const SCENARIO = "delegate-done";
const fixture = loadFixture(`tools/${SCENARIO}`);
const sessionId = (fixture.interactions.find((i) => i.method === "POST" && i.path === "/session" && i.status === 200)!.body as { id: string }).id;

/** A copy of the recording in which every assistant message of the session carries a provider error. */
function replyFailed(f: Fixture): Fixture {
  const copy = structuredClone(f);
  let edited = 0;
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== "object" || node === null) return;
    const o = node as Record<string, unknown>;
    if (o.role === "assistant" && o.sessionID === sessionId && typeof o.id === "string") {
      o.error = { name: "APIError", data: { message: "Internal Server Error", statusCode: 500 } };
      edited++;
    }
    Object.values(o).forEach(walk);
  };
  walk(copy.interactions);
  expect(edited, "the edit reached opencode's record").toBeGreaterThan(0);
  return copy;
}

describe("a wrong expected outcome fails the tool's test", () => {
  const replay = useToolReplay(SCENARIO);

  it("the genuine row passes (the baseline the others change one thing of)", async () => {
    await expectRecordedRow("oc_delegate", { scenario: SCENARIO, call: 0, answer: "done" }, replay);
  });

  it("a row that claims an answer opencode did not record fails", async () => {
    await expect(expectRecordedRow("oc_delegate", { scenario: SCENARIO, call: 0, answer: "error" }, replay)).rejects.toThrow(/expected 'done' to be 'error'/);
  });

  it("a stored answer that disagrees with opencode's record fails", () => {
    expectStoredAnswerAsRecorded(fixture, 0);
    const wrong = structuredClone(fixture);
    wrong.calls![0]!.recorded.status = "error";
    expect(() => expectStoredAnswerAsRecorded(wrong, 0)).toThrow(/the stored status is the one opencode's record bears out/);
    const failed = structuredClone(fixture);
    failed.calls![0]!.recorded.isError = true;
    expect(() => expectStoredAnswerAsRecorded(failed, 0)).toThrow(/the stored answer is an error as opencode's record says/);
  });

  it("a record of opencode that says the reply failed fails the tool's done", async () => {
    const [result] = await replay.replay(1);
    expect(result!.data.status).toBe("done");
    expect(expectAsRecorded(result!, fixture, 0).outcome?.status).toBe("done");
    expect(() => expectAsRecorded(result!, replyFailed(fixture), 0)).toThrow(/expected 'done' to be 'error'/);
  });
});
