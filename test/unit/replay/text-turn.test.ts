// Replay of the text-turn recording: prompt, session.idle from the event stream, the answer read back.
import { describe, expect, it } from "vitest";
import { TEXT_ANSWER } from "../../support/recording/scenarios.js";
import { useReplay } from "../../support/replay.js";
import { createSession, promptAndWait } from "../../support/turns.js";

const replay = useReplay("text-turn");

describe("replay: text-turn", () => {
  it("ends with session.idle for the session and the messages hold the answer", async () => {
    const client = replay.connect();
    const session = await createSession(client, "text turn");

    const turn = await promptAndWait(client, session.id, "say hello", { timeoutMs: 10_000 });

    const types = turn.events.map((e) => e.type);
    expect(types.at(-1)).toBe("session.idle");
    expect(types).toContain("message.part.delta");
    expect(turn.events.every((e) => e.directory === "/project")).toBe(true);
    expect(turn.answer).toBe(TEXT_ANSWER);
    expect(turn.messages.map((m) => m.info.role)).toEqual(["user", "assistant"]);
  });
});
