// Replay of the retry-failure recording: five retry statuses, then APIError 429 on the message.
import { describe, expect, it } from "vitest";
import type { Schemas } from "../../../src/client/index.js";
import { useReplay } from "../../support/replay.js";
import { createSession, lastAssistant, promptAndWait } from "../../support/turns.js";

const replay = useReplay("retry-failure");

describe("replay: retry-failure", () => {
  it("reports retry attempts 1..5, session.error, then APIError on the assistant message", async () => {
    const client = replay.connect();
    const session = await createSession(client, "retry failure");

    const turn = await promptAndWait(client, session.id, "hello", { timeoutMs: 10_000 });

    const attempts = turn.events.flatMap((e) => (e.type === "session.status" && e.properties.status.type === "retry" ? [e.properties.status.attempt] : []));
    expect([...new Set(attempts)]).toEqual([1, 2, 3, 4, 5]);
    expect(turn.events.find((e) => e.type === "session.error")).toMatchObject({ properties: { error: { name: "APIError" } } });
    const info = lastAssistant(turn.messages)!.info as Schemas["AssistantMessage"];
    expect(info.error).toMatchObject({ name: "APIError", data: { statusCode: 429, isRetryable: true } });
  });
});
