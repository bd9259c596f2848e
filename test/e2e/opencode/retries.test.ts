// opencode's provider-error handling through our client (docs/opencode-behaviour.md §6): a 429 is retried 5 times,
// honouring `retry-after-ms`, then fails with APIError; a 400 fails at once.
import { describe, expect, it } from "vitest";
import { useClient } from "../../support/conductor.js";
import type { OpencodeEvent, Schemas } from "../../../src/client/types.js";
import { httpError, times } from "../../support/scripted-model.js";
import { createSession, lastAssistant, promptAndWait } from "../../support/turns.js";

const h = useClient();

/** `session.status` retry attempts in the order they arrived (repeats collapsed). */
function retryAttempts(events: OpencodeEvent[]): number[] {
  const attempts: number[] = [];
  for (const e of events) {
    if (e.type !== "session.status" || e.properties.status.type !== "retry") continue;
    if (attempts.at(-1) !== e.properties.status.attempt) attempts.push(e.properties.status.attempt);
  }
  return attempts;
}

function apiError(info: Schemas["AssistantMessage"]) {
  expect(info.error?.name).toBe("APIError");
  return (info.error as Schemas["APIError"]).data;
}

describe("opencode retries through the client", () => {
  it("retries a 429 with retry-after-ms five times, then fails with APIError", async () => {
    const session = await createSession(h.client, "429");
    h.server.model.forSession(session.id).queue(times(6, httpError(429, { retryAfterMs: 200 })));

    const turn = await promptAndWait(h.client, session.id, "hello", { timeoutMs: 60_000 });

    expect(retryAttempts(turn.events)).toEqual([1, 2, 3, 4, 5]);
    const retry = turn.events.find((e) => e.type === "session.status" && e.properties.status.type === "retry");
    expect(retry).toMatchObject({ properties: { status: { message: "Rate limit exceeded" } } });
    const sessionError = turn.events.find((e) => e.type === "session.error");
    expect(sessionError).toMatchObject({ properties: { error: { name: "APIError", data: { statusCode: 429 } } } });

    const info = lastAssistant(turn.messages)!.info as Schemas["AssistantMessage"];
    expect(apiError(info)).toMatchObject({ statusCode: 429, isRetryable: true, message: "Rate limit exceeded" });
    expect(h.server.model.requestsFor(session.id)).toHaveLength(6);
    // retry-after-ms was honoured: the six requests are ~200 ms apart, not the 2 s+ exponential default.
    const at = h.server.model.requestsFor(session.id).map((r) => r.at);
    expect(at.at(-1)! - at[0]!).toBeLessThan(5 * 2_000);
  });

  it("fails a 400 at once: one model request, no retry", async () => {
    const session = await createSession(h.client, "400");
    h.server.model.forSession(session.id).queue(httpError(400));

    const turn = await promptAndWait(h.client, session.id, "hello", { timeoutMs: 60_000 });

    expect(retryAttempts(turn.events)).toEqual([]);
    expect(turn.events.map((e) => e.type)).toContain("session.error");
    const info = lastAssistant(turn.messages)!.info as Schemas["AssistantMessage"];
    expect(apiError(info)).toMatchObject({ statusCode: 400, isRetryable: false });
    expect(h.server.model.requestsFor(session.id)).toHaveLength(1);
  });
});
