// When the opencode 2.x server itself fails under a turn: SIGKILLed mid-turn, the waiting tool
// answers within 2 s with the session id and `lost` (never `running` or `done`); restarted on the
// same port, what the server recorded is re-read and every report agrees with it; new work goes
// through. The same story as the 1.x suite (test/e2e/mcp/outcome-lost.test.ts), on the v2 engine.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectV2 } from "../../src/client/v2/index.js";
import { startMcpFor, type McpSession } from "../support/mcp-client.js";
import { killUnderTurn } from "../support/killed-under-turn.js";
import type { TestOpencode } from "../support/opencode.js";
import { startOpencode2, type V2Message } from "../support/opencode2.js";
import { text, toolCall } from "../support/scripted-model.js";

describe("opencode 2.x killed and restarted under a turn", () => {
  let server: TestOpencode;
  let mcp: McpSession;
  beforeAll(async () => {
    server = await startOpencode2();
    mcp = await startMcpFor(server, { OPENCODE_CONDUCTOR_STATE_DIR: join(server.root, "state") });
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.stop();
  });

  it("answers within 2 s with the session id and `lost`; after the restart the reports agree with the record", async () => {
    const sessionId = await killUnderTurn(server, mcp);

    await server.restart();
    const v2 = await connectV2({ url: server.url, password: server.password });
    const page = (await v2.request("session.messages", { path: { sessionID: sessionId }, query: { order: "asc" } })) as { data: V2Message[] };
    // What the restarted 2.x server recorded: the prompt, no finished reply, and nothing running.
    expect(page.data.findLast((m) => m.type === "user")).toMatchObject({ text: "a five second turn" });
    expect(page.data.filter((m) => m.type === "assistant" && m.finish !== undefined)).toEqual([]);
    expect(((await v2.request("session.active", {})) as { data: Record<string, unknown> }).data[sessionId]).toBeUndefined();

    const waited = await mcp.call("oc_wait", { session_id: sessionId, timeout_s: 30 });
    expect(waited.data.status, waited.text).toBe("lost");
    const read = await mcp.call("oc_result", { session_id: sessionId });
    expect(read.data.status, read.text).toBe("lost");
    // A fresh MCP server that never saw the turn reads the same record: lost, not done.
    const fresh = await startMcpFor(server, { OPENCODE_CONDUCTOR_STATE_DIR: join(server.root, "state-fresh") });
    try {
      const again = await fresh.call("oc_result", { session_id: sessionId });
      expect(again.data.status, again.text).toBe("lost");
    } finally {
      await fresh.close();
    }

    server.model.queue(text("back in business"));
    const next = await mcp.call("oc_delegate", { task: "after the restart" });
    expect(next.data.status, next.text).toBe("done");
    expect(next.data.answer).toBe("back in business");
  });

  it("a turn killed after a finished step: the lost answer shows that step's tool and file, as the server recorded them", async () => {
    const file = join(server.directory, "before-the-kill.txt");
    server.model.queue(toolCall("write", { path: file, content: "written\n" }), text("too late", { delayMs: 5_000 }));
    const earlier = server.model.requests.filter((r) => r.kind === "chat").length; // the first test's
    const call = mcp.call("oc_delegate", { task: "write, then a slow answer" });
    await server.model.waitForRequests(earlier + 2, { kind: "chat" });
    await server.kill();
    const result = await call;
    expect(result.data.status, result.text).toBe("lost");
    const tools = (result.data.tools as Array<{ tool: string; status: string }>) ?? [];
    expect(tools).toEqual([expect.objectContaining({ tool: "write", status: "completed" })]);
    expect((result.data.files as Array<{ path: string }>).map((f) => f.path)).toEqual(["before-the-kill.txt"]);

    await server.restart();
    const v2 = await connectV2({ url: server.url, password: server.password });
    const sessionID = result.data.session_id as string;
    const page = (await v2.request("session.messages", { path: { sessionID }, query: { order: "asc" } })) as { data: V2Message[] };
    const recordedTools = page.data.flatMap((m) => (m.content ?? []).filter((c) => c.type === "tool").map((c) => ({ name: c.name, status: c.state?.status })));
    expect(recordedTools).toEqual([{ name: "write", status: "completed" }]);
  });
});
