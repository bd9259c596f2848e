// A prompt opencode accepts and then never runs: opencode 1.18.33 answers 204 to a prompt for an
// unknown agent, then emits only two session.error events (no user message, never busy, no idle).
// The conductor used to wait out the caller's timeout and answer `running` though nothing ran; now
// the watch re-reads the session after the start grace and ends the turn on what opencode said.
// Each report is compared with the session re-read straight from opencode: nothing recorded, idle.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type OpencodeClient } from "../../../src/client/index.js";
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
  it("oc_delegate answers `error` with opencode's message within the bound; oc_wait and oc_result never say done or running", async () => {
    const started = Date.now();
    const r = await mcp.call("oc_delegate", { task: "never runs", agent: UNKNOWN_AGENT, timeout_s: 120 });
    const took = Date.now() - started;
    expect(r.isError, r.text).toBe(false);
    expect(took).toBeLessThan(BOUND_MS);
    expect(r.data.status, r.text).toBe("error");
    expect(r.data.error).toMatchObject({ name: "UnknownError", message: expect.stringContaining(`Agent not found: "${UNKNOWN_AGENT}"`) });
    const sessionId = r.data.session_id as string;
    expect(sessionId).toMatch(/^ses_/);

    // What opencode recorded: not a single message, and the session is idle. No turn runs.
    expect(await client.call("session.messages", { path: { sessionID: sessionId } })).toEqual([]);
    expect((await client.call("session.status"))[sessionId]).toBeUndefined();
    expect(server.model.requestsFor(sessionId).filter((q) => q.kind === "chat")).toHaveLength(0);

    // Later reads have only that record (the session error was an event, never stored): `lost`, with what to do.
    for (const [tool, args] of [
      ["oc_wait", { session_id: sessionId, timeout_s: 60 }],
      ["oc_result", { session_id: sessionId }],
    ] as const) {
      const read = await mcp.call(tool, args);
      expect(read.data.status, `${tool}: ${read.text}`).toBe("lost");
      expect(read.text).toMatch(/recorded nothing of this turn/);
      expect(read.text).toMatch(/send the task again/);
    }

    // A fresh MCP server (it never saw the prompt) reads the same record.
    const fresh = await startMcpFor(server, { OPENCODE_CONDUCTOR_STATE_DIR: join(server.root, "state-fresh") });
    try {
      const waited = await fresh.call("oc_wait", { session_id: sessionId, timeout_s: 60 });
      expect(waited.data.status, waited.text).toBe("lost");
    } finally {
      await fresh.close();
    }

    // Doing what the message says works: the same session with a real agent.
    server.model.forSession(sessionId).queue(text("ran this time"));
    const again = await mcp.call("oc_delegate", { session_id: sessionId, task: "now with a real agent", agent: "build" });
    expect(again.data.status, again.text).toBe("done");
    expect(again.data.answer).toBe("ran this time");
  });
});
