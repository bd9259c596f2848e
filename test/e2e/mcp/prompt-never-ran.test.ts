// A prompt opencode accepts and then never runs: opencode 1.18.33 answers 204 to a prompt for an
// unknown agent, then emits only two session.error events (no user message, never busy, no idle).
// The conductor used to wait out the caller's timeout and answer `running` though nothing ran; now
// the watch re-reads the session after the start grace and ends the turn on what opencode said.
// (oc_delegate refuses an unknown agent before prompting; oc_send, like any other client, does not.)
// Each report is compared with the session re-read straight from opencode: nothing recorded, idle.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type OpencodeClient } from "../../../src/client/index.js";
import { freshReads } from "../../support/fresh-mcp.js";
import { startMcpFor, type McpSession } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { text } from "../../support/scripted-model.js";

const UNKNOWN_AGENT = "nope-agent";
/** The start grace (10 s) and two re-reads 2 s apart, with room for a loaded machine; far below the 120 s timeout. */
const BOUND_MS = 40_000;

let server: TestOpencode;
let mcp: McpSession;
let client: OpencodeClient;
beforeAll(async () => {
  server = await startOpencode();
  mcp = await startMcpFor(server, { OPENCODE_CONDUCTOR_STATE_DIR: join(server.root, "state") });
  client = connect({ url: server.url, password: server.password, directory: server.directory });
});
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
});

describe("a prompt opencode accepts and never runs (1.18.33, unknown agent)", () => {
  it("oc_wait answers `error` with opencode's message within the bound; later reads say lost, never done or running", async () => {
    // oc_delegate refuses an unknown agent up front; oc_send passes it on (as any other client could).
    const sessionId = (await client.call("session.create", { body: { title: "never ran" } })).id;
    const sentAt = Date.now();
    const sent = await mcp.call("oc_send", { session_id: sessionId, message: "never runs", agent: UNKNOWN_AGENT, model: "fake/scripted" });
    expect(sent.isError, sent.text).toBe(false);
    expect(sent.data.status, sent.text).toBe("running");
    const r = await mcp.call("oc_wait", { session_id: sessionId, timeout_s: 120 });
    expect(Date.now() - sentAt).toBeLessThan(BOUND_MS);
    expect(r.isError, r.text).toBe(false);
    expect(r.data.status, r.text).toBe("error");
    expect(r.data.error).toMatchObject({ name: "UnknownError", message: expect.stringContaining(`Agent not found: "${UNKNOWN_AGENT}"`) });

    // What opencode recorded: not a single message, and the session is idle. No turn runs.
    expect(await client.call("session.messages", { path: { sessionID: sessionId } })).toEqual([]);
    expect((await client.call("session.status"))[sessionId]).toBeUndefined();
    expect(server.model.requestsFor(sessionId).filter((q) => q.kind === "chat")).toHaveLength(0);

    // Later reads have only that record (the session error was an event, never stored): `lost`, with what to do.
    const read = await mcp.call("oc_result", { session_id: sessionId });
    expect(read.data).toMatchObject({ state: "idle", status: "lost" });
    expect(read.text).toMatch(/recorded nothing of this turn/);
    expect(read.text).toMatch(/send the task again/);
    // A fresh MCP server (it never saw the prompt) reads the same record.
    for (const [tool, again] of Object.entries(await freshReads(server, sessionId))) expect(again.data.status, `fresh ${tool}: ${again.text}`).toBe("lost");

    // Doing what the message says works: the same session with a real agent.
    server.model.forSession(sessionId).queue(text("ran this time"));
    await mcp.call("oc_send", { session_id: sessionId, message: "now with a real agent", agent: "build", model: "fake/scripted" });
    const ran = await mcp.call("oc_wait", { session_id: sessionId, timeout_s: 120 });
    expect(ran.data.status, ran.text).toBe("done");
    expect(ran.data.answer).toBe("ran this time");
    // 1.x dropped the first prompt for good: only the new one is in the record (2.x keeps it, see e2e-v2).
    const users = (await client.call("session.messages", { path: { sessionID: sessionId } })).filter((m) => m.info.role === "user");
    expect(users).toHaveLength(1);
  });
});
