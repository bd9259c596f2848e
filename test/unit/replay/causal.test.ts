// The replayed event stream is causal: an event recorded after a request is held back until the
// test has made that request, so a replay cannot pass by seeing a turn end before it was prompted.
import { describe, expect, it } from "vitest";
import { useReplay } from "../../support/replay.js";
import { createSession, prompt, watchSession } from "../../support/turns.js";

// No fallback release during the test: only the prompt may let the session's events through.
const replay = useReplay("text-turn", { maxEventWaitMs: 30_000 });

describe("replay: event causality", () => {
  it("sends no session event before the prompt, and the whole turn after it", async () => {
    const client = replay.connect();
    const session = await createSession(client, "text turn");
    const watch = await watchSession(client, session.id, { timeoutMs: 10_000 });
    try {
      // A replay that ran ahead would deliver the turn's events in this pause; a causal one never does.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(watch.events).toEqual([]);

      await prompt(client, session.id, "say hello");
      const events = await watch.idle();
      expect(events[0]?.type).not.toBe("session.idle");
      expect(events.at(-1)?.type).toBe("session.idle");
    } finally {
      watch.close();
    }
  });
});
