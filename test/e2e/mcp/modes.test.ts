// Server modes over stdio against real opencode: read-only, a single toolset, the lazy connection
// (no opencode needed until the first tool call), and cancellation of a long oc_delegate.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../src/client/spawn.js";
import { startMcp, type McpSession } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { text } from "../../support/scripted-model.js";

let server: TestOpencode;
const sessions: McpSession[] = [];

beforeAll(async () => {
  server = await startOpencode();
});
afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  await server?.stop();
});

async function mcpWith(env: Record<string, string> = {}): Promise<McpSession> {
  const mcp = await startMcp({ OPENCODE_URL: server.url, OPENCODE_PASSWORD: server.password, OPENCODE_CONDUCTOR_DIRECTORY: server.directory, ...env });
  sessions.push(mcp);
  return mcp;
}

async function toolNames(mcp: McpSession): Promise<string[]> {
  return (await mcp.client.listTools()).tools.map((t) => t.name).sort();
}

describe("read-only mode", () => {
  let mcp: McpSession;
  beforeAll(async () => {
    mcp = await mcpWith({ OPENCODE_CONDUCTOR_READ_ONLY: "1" });
  });

  it("hides every tool that changes something", async () => {
    const names = await toolNames(mcp);
    for (const hidden of ["oc_delegate", "oc_delegate_parallel", "oc_send", "oc_interrupt", "oc_answer", "oc_session"]) expect(names).not.toContain(hidden);
    for (const shown of ["oc_status", "oc_wait", "oc_result", "oc_sessions", "oc_pending", "oc_models", "oc_catalog"]) expect(names).toContain(shown);
    for (const tool of (await mcp.client.listTools()).tools) {
      if (tool.name !== "oc_api") expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
    }
  });

  it("says so in oc_status", async () => {
    const r = await mcp.call("oc_status");
    expect(r.isError, r.text).toBe(false);
    expect(r.data.read_only).toBe(true);
    expect(r.text).toContain("Read-only");
  });

  it("lets oc_api run a GET but refuses a POST, sending nothing", async (ctx) => {
    // oc_api joins the default toolsets with the api toolset; skip until the built server has it.
    if (!(await toolNames(mcp)).includes("oc_api")) return ctx.skip();
    const listed = await mcp.call("oc_api", { operation: "session.list" });
    expect(listed.isError, listed.text).toBe(false);
    const before = (listed.data.result as unknown[]).length;

    const refused = await mcp.call("oc_api", { operation: "session.create", body: { title: "must not exist" } });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("OPENCODE_CONDUCTOR_READ_ONLY");
    const after = await mcp.call("oc_api", { method: "GET", path: "/session" });
    expect((after.data.result as unknown[]).length).toBe(before);
  });
});

describe("a single toolset", () => {
  it("OPENCODE_CONDUCTOR_TOOLSETS=discover shows only oc_status, oc_models and oc_catalog", async () => {
    const mcp = await mcpWith({ OPENCODE_CONDUCTOR_TOOLSETS: "discover" });
    expect(await toolNames(mcp)).toEqual(["oc_catalog", "oc_models", "oc_status"]);
    const r = await mcp.call("oc_status");
    expect(r.data.toolsets).toEqual(["discover"]);
  });
});

describe("lazy connection", () => {
  it("answers initialize and tools/list with opencode unreachable; the first call says how to fix it", async () => {
    const port = await freePort(); // closed: nothing listens there
    const url = `http://127.0.0.1:${port}`;
    const mcp = await startMcp({ OPENCODE_URL: url });
    sessions.push(mcp);
    expect(mcp.client.getServerVersion()?.name).toBe("opencode-conductor");
    expect(await toolNames(mcp)).toContain("oc_delegate");

    const r = await mcp.call("oc_status");
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`127.0.0.1:${port}`);
    expect(r.text).toMatch(/opencode serve/);
    expect(r.text).toContain("OPENCODE_URL");
    expect(r.text).not.toMatch(/\n\s+at /); // no stack trace
    // Still serving after the failure.
    expect((await mcp.call("oc_status")).isError).toBe(true);
    expect(await toolNames(mcp)).toContain("oc_status");
  });
});

describe("cancelling oc_delegate", () => {
  let mcp: McpSession;
  beforeAll(async () => {
    mcp = await mcpWith();
  });

  /** Starts a 20 s turn, cancels the call once the model is answering, returns the session id. */
  async function startAndCancel(args: Record<string, unknown>): Promise<string> {
    const seen = server.model.requests.filter((r) => r.kind === "chat").length;
    server.model.queue(text("late", { delayMs: 20_000 }));
    const controller = new AbortController();
    const call = mcp.call("oc_delegate", { task: "A slow task", permissions: "auto", ...args }, { signal: controller.signal });
    const requests = await server.model.waitForRequests(seen + 1, { kind: "chat", timeoutMs: 60_000 });
    controller.abort();
    await expect(call).rejects.toThrow(/abort/i);
    const sessionId = requests.at(-1)!.sessionId;
    expect(sessionId).toMatch(/^ses_/);
    return sessionId!;
  }

  it("stops waiting but leaves the agent working; the server keeps serving", async () => {
    const sessionId = await startAndCancel({});
    const state = await mcp.call("oc_result", { session_id: sessionId });
    expect(state.isError, state.text).toBe(false);
    expect(state.data.state).toBe("busy");
    expect((await mcp.call("oc_status")).data.version).toBe("1.18.33");

    // Clean up: stop the 20 s turn, and check it really stopped.
    const stopped = await mcp.call("oc_interrupt", { session_id: sessionId });
    expect(stopped.isError, stopped.text).toBe(false);
    expect((await mcp.call("oc_result", { session_id: sessionId })).data.state).toBe("idle");
  });

  it("with interrupt_on_cancel, also interrupts the session", async () => {
    const started = Date.now();
    const sessionId = await startAndCancel({ interrupt_on_cancel: true });
    const waited = await mcp.call("oc_wait", { session_id: sessionId, timeout_s: 30 });
    expect(waited.isError, waited.text).toBe(false);
    expect(waited.data.status).toBe("interrupted");
    expect(waited.data.answer).not.toBe("late");
    expect(Date.now() - started).toBeLessThan(20_000); // did not run to the model's end
    expect((await mcp.call("oc_result", { session_id: sessionId })).data.state).toBe("idle");
  });
});
