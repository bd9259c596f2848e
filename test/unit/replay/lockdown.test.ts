// The replay is a lockdown: a request the fixture does not hold fails, naming its method and path,
// and requests to any other host are msw errors (onUnhandledRequest: "error").
import { describe, expect, it, vi } from "vitest";
import { useReplay } from "../../support/replay.js";

const replay = useReplay("session-crud");

describe("replay lockdown", () => {
  it("fails an unrecorded operation with a message naming its method and path", async () => {
    const client = replay.connect();
    const error = await client.call("session.delete", { path: { sessionID: "ses_0001" } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain("DELETE /session/ses_0001");
    expect(replay.unrecorded).toEqual(["DELETE /session/ses_0001?directory=/project"]);
    replay.unrecorded.length = 0; // expected here; any other test with an entry fails in afterEach
  });

  it("fails a recorded request made more often than recorded", async () => {
    const client = replay.connect();
    await client.call("session.list");
    await expect(client.call("session.list")).rejects.toThrow("GET /session");
    expect(replay.unrecorded).toEqual(["GET /session?directory=/project"]);
    replay.unrecorded.length = 0;
  });

  it("serves a recorded request only with the recorded query", async () => {
    await expect(replay.connect().call("session.list", { query: { limit: 5 } })).rejects.toThrow(/GET \/session\?.*limit=5/);
    expect(replay.unrecorded).toHaveLength(1);
    replay.unrecorded.length = 0;
  });

  it("errors on a request to any other host, naming it", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      await expect(fetch("http://elsewhere.invalid/session")).rejects.toThrow();
      expect(logged.mock.calls.flat().join(" ")).toContain("GET http://elsewhere.invalid/session");
    } finally {
      logged.mockRestore();
    }
  });
});
