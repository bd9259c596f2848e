// The tools' replay holds a tool to the recording: a tool that reads more than the recording holds
// (here, oc_result asked again and again, where the recording answered it once) soon gets no
// answer and the test fails, naming the request; no read repeats its last answer.
import { describe, expect, it } from "vitest";
import { useToolReplay } from "../../support/tool-replay.js";

const replay = useToolReplay("delegate-done");

describe("the tools' replay", () => {
  it("fails a tool that reads more than the recording holds", async () => {
    const m = await replay.mcp();
    const sessionId = replay.calls[1]!.arguments.session_id as string;
    const answers = [];
    while (replay.unrecorded.length === 0 && answers.length < 10) answers.push(await m.call("oc_result", { session_id: sessionId }));
    expect(answers[0]!.isError, answers[0]!.text).toBe(false);
    expect(answers.length).toBeLessThan(10);
    expect(answers.at(-1)!.isError).toBe(true);
    expect(replay.unrecorded[0]).toMatch(new RegExp(`^GET /session/${sessionId}`));
    replay.unrecorded.length = 0; // expected here; any other test with an entry fails in afterEach
  });
});
