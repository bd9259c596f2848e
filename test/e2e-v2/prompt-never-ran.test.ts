// A prompt opencode 2.x accepts and then never runs: with an unknown agent selected, the pre-release
// admits the prompt (`session.input.admitted`), starts an execution and fails it ("Agent not
// found") without ever promoting the prompt to a user message. Nothing of the turn is recorded, so
// the conductor must not call it done, nor wait for it: after oc_send (oc_delegate refuses unknown
// agents up front; oc_send, like any other client, does not) oc_wait answers `lost` within the bound
// (the watch re-reads after the start grace, twice), and oc_result, on this MCP server or a fresh
// one, reads the same empty record (it used to answer `done`). Each report is compared with the
// session re-read straight from the 2.x server. The prompt is not dropped, though: 2.x keeps it and
// runs it before the next prompt sent to the session, and the messages say so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshReads } from "../support/fresh-mcp.js";
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
  it("oc_wait answers `lost` with what to do within the bound; oc_result agrees, also from a fresh MCP server, never done", async () => {
    // oc_delegate refuses an unknown agent up front; oc_send passes it on (as any other client could).
    const created = (await h.v2.request("session.create", { body: { title: "never ran" } })) as { data: { id: string } };
    const sessionId = created.data.id;
    const log = await recordEvents(h.v2);
    const sentAt = Date.now();
    const sent = await h.mcp.call("oc_send", { session_id: sessionId, message: "never runs", agent: UNKNOWN_AGENT, model: "fake/scripted" });
    expect(sent.isError, sent.text).toBe(false);
    const r = await h.mcp.call("oc_wait", { session_id: sessionId, timeout_s: 120 });
    expect(Date.now() - sentAt).toBeLessThan(BOUND_MS);
    expect(r.isError, r.text).toBe(false);
    expect(r.data.status, r.text).toBe("lost");
    // The watch saw the run fail before our prompt became a message, and says so.
    expect(r.text).toContain(`its run failed before the prompt became a message (unknown: Agent not found: "${UNKNOWN_AGENT}")`);
    expect(r.text).toMatch(/opencode keeps the prompt: it runs before the next prompt/);

    // What the server said: the prompt admitted, an execution started and failed, the prompt never promoted.
    const said = log.sequence(sessionId);
    log.stop();
    expect(said).toEqual(expect.arrayContaining(["session.input.admitted", "session.execution.started", "session.execution.failed"]));
    expect(said).not.toContain("session.input.promoted");
    const failed = log.of(sessionId).find((e) => e.type === "session.execution.failed")!;
    expect((failed.data.error as { message?: string }).message).toContain(`Agent not found: "${UNKNOWN_AGENT}"`);
    // What it recorded: the agent switch, and no user or assistant message; nothing runs.
    const recorded = await h.recorded(sessionId);
    expect(recorded.map((m) => m.type)).toContain("agent-switched");
    expect(recorded.filter((m) => m.type === "user" || m.type === "assistant")).toEqual([]);
    const active = (await h.v2.request("session.active", {})) as { data: Record<string, unknown> };
    expect(active.data[sessionId]).toBeUndefined();
    expect(h.server.model.requestsFor(sessionId).filter((q) => q.kind === "chat")).toHaveLength(0);

    const read = await h.mcp.call("oc_result", { session_id: sessionId });
    expect(read.data.status, read.text).toBe("lost");
    for (const [tool, again] of Object.entries(await freshReads(h.server, sessionId))) {
      // A fresh reader has only the record: nothing of the turn, and the 2.x caveat.
      expect(again.data.status, `fresh ${tool}: ${again.text}`).toBe("lost");
      expect(again.text).toMatch(/recorded nothing of this turn/);
      expect(again.text).toMatch(/opencode 2\.x keeps a prompt it admitted and runs it before the next one/);
    }

    // As the message says: the next prompt (with a real agent) runs the kept one first, in the same run.
    h.server.model.forSession(sessionId).queue(text("ran the kept prompt"), text("ran the new one"));
    await h.mcp.call("oc_send", { session_id: sessionId, message: "now with a real agent", agent: "build", model: "fake/scripted" });
    const ran = await h.mcp.call("oc_wait", { session_id: sessionId, timeout_s: 120 });
    expect(ran.data.status, ran.text).toBe("done");
    const turns = (await h.recorded(sessionId)).filter((m) => m.type === "user" || m.type === "assistant");
    expect(turns.map((m) => m.type)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(turns[0]!.text).toBe("never runs");
    expect(turns[2]!.text).toBe("now with a real agent");
    expect(ran.data.answer).toBe("ran the new one");
  });
});
