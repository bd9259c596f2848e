// Replay of the session-crud recording: create, list, get, and a 404 for a missing id.
import { describe, expect, it } from "vitest";
import { NotFoundError } from "../../../src/client/index.js";
import { MISSING_SESSION } from "../../support/recording/scenarios.js";
import { useReplay } from "../../support/replay.js";

const replay = useReplay("session-crud");

describe("replay: session-crud", () => {
  it("creates, lists and gets a session; a missing id is NotFoundError", async () => {
    const client = replay.connect();
    const created = await client.call("session.create", { body: { title: "crud" } });
    expect(created).toMatchObject({ id: expect.stringMatching(/^ses_/), title: "crud", directory: "/project" });

    const listed = await client.call("session.list");
    expect(listed.map((s) => s.id)).toEqual([created.id]);
    expect(await client.call("session.get", { path: { sessionID: created.id } })).toEqual(created);

    const missing = await client.call("session.get", { path: { sessionID: MISSING_SESSION } }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).status).toBe(404);
    expect((missing as NotFoundError).message).toContain("Session not found");
  });
});
