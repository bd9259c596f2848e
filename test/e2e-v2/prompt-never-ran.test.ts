// A prompt opencode 2.x accepts and then never runs: with an unknown agent selected, the pre-release
// admits the prompt (`session.input.admitted`), starts an execution and fails it ("Agent not
// found") without ever promoting the prompt to a user message. Nothing of the turn is recorded, so
// the conductor must not call it done, nor wait for it: oc_delegate answers `lost` within the bound
// (the watch re-reads after the start grace, twice), and oc_wait / oc_result, on this MCP server or
// a fresh one, read the same empty record (they used to answer `done`). Each report is compared with
// the session re-read straight from the 2.x server.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpFor } from "../support/mcp-client.js";
import { startMcpOnV2, type McpOnV2 } from "../support/mcp-v2.js";
import { text } from "../support/scripted-model.js";
import { recordEvents } from "../support/v2-events.js";

const UNKNOWN_AGENT = "nope-agent";
/** The start grace (10 s) and two re-reads 2 s apart, with room for a loaded machine; far below the 120 s timeout. */
const BOUND_MS = 40_000;

let h: McpOnV2;
beforeAll(async () => {
  h = await startMcpOnV2();
});
afterAll(() => h?.stop());

describe("a prompt opencode 2.x accepts and never runs (unknown agent)", () => {
  it("oc_delegate answers `lost` with what to do within the bound; oc_wait and oc_result agree, never done", async () => {
    const log = await recordEvents(h.v2);
    const started = Date.now();
    const r = await h.mcp.call("oc_delegate", { task: "never runs", agent: UNKNOWN_AGENT, timeout_s: 120 });
    expect(r.isError, r.text).toBe(false);
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
    const sessionId = r.data.session_id as string;
    expect(sessionId).toMatch(/^ses_/);
    expect(r.data.status, r.text).toBe("lost");
    expect(r.text).toMatch(/recorded nothing of this turn/);
    expect(r.text).toMatch(/check the agent and model, then send the task again/);

    // What the server said: the prompt admitted, an execution started and failed, the prompt never promoted.
    const said = log.sequence(sessionId);
    log.stop();
    expect(said).toEqual(expect.arrayContaining(["session.input.admitted", "session.execution.started", "session.execution.failed"]));
    expect(said).not.toContain("session.input.promoted");
    const failed = log.of(sessionId).find((e) => e.type === "session.execution.failed")!;
    expect((failed.data.error as { message?: string }).message).toContain(`Agent not found: "${UNKNOWN_AGENT}"`);
    // What it recorded: the agent switch, and no user or assistant message.
    const recorded = await h.recorded(sessionId);
    expect(recorded.map((m) => m.type)).toContain("agent-switched");
    expect(recorded.filter((m) => m.type === "user" || m.type === "assistant")).toEqual([]);
    const active = (await h.v2.request("session.active", {})) as { data: Record<string, unknown> };
    expect(active.data[sessionId]).toBeUndefined();
    expect(h.server.model.requestsFor(sessionId).filter((q) => q.kind === "chat")).toHaveLength(0);

    for (const [tool, args] of [
      ["oc_wait", { session_id: sessionId, timeout_s: 60 }],
      ["oc_result", { session_id: sessionId }],
    ] as const) {
      const read = await h.mcp.call(tool, args);
      expect(read.data.status, `${tool}: ${read.text}`).toBe("lost");
    }
    const fresh = await startMcpFor(h.server, { OPENCODE_CONDUCTOR_STATE_DIR: join(h.server.root, "state-fresh") });
    try {
      for (const [tool, args] of [
        ["oc_wait", { session_id: sessionId, timeout_s: 60 }],
        ["oc_result", { session_id: sessionId }],
      ] as const) {
        const read = await fresh.call(tool, args);
        expect(read.data.status, `fresh ${tool}: ${read.text}`).toBe("lost");
      }
    } finally {
      await fresh.close();
    }

    // Doing what the message says works: the same session with a real agent.
    h.server.model.forSession(sessionId).queue(text("ran this time"));
    const again = await h.mcp.call("oc_delegate", { session_id: sessionId, task: "now with a real agent", agent: "build" });
    expect(again.data.status, again.text).toBe("done");
    expect(again.data.answer).toBe("ran this time");
  });
});
