// When opencode itself fails: SIGKILLed mid-turn (the waiting tool answers within 2 s with the
// session id), restarted on the same port (the dead turn is `lost`, never `running` or `done`, and
// new work goes through), no opencode binary at all (an answer within 2 s that says what to do),
// and the MCP server SIGKILLed while an instance task runs a shell command (nothing it started stays
// alive: not the instance's supervisor or its process group, not opencode, not the command).
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/index.js";
import { isProcessAlive } from "../../../src/client/discovery/processes.js";
import { CLI, startMcp, startMcpFor, type McpSession } from "../../support/mcp-client.js";
import { killUnderTurn } from "../../support/killed-under-turn.js";
import { makeProjectDir, offlineConfig, startOpencode, xdg, type TestOpencode } from "../../support/opencode.js";
import { describeProcesses, killAll, treeWith, untilGone, type ProcessInfo } from "../../support/process-tree.js";
import { text, toolCall } from "../../support/scripted-model.js";
import { spawn } from "node:child_process";

describe("opencode killed and restarted under a turn", () => {
  let server: TestOpencode;
  let mcp: McpSession;
  beforeAll(async () => {
    server = await startOpencode();
    mcp = await startMcpFor(server, { OPENCODE_CONDUCTOR_STATE_DIR: join(server.root, "state") });
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.stop();
  });

  it("answers within 2 s with the session id, reports `lost` after the restart, and new work goes through", async () => {
    const sessionId = await killUnderTurn(server, mcp);

    await server.restart();
    // What the restarted opencode recorded: the reply never completed and carries no error.
    const client = connect({ url: server.url, password: server.password, directory: server.directory });
    const messages = await client.call("session.messages", { path: { sessionID: sessionId } });
    const reply = messages.findLast((m) => m.info.role === "assistant")?.info;
    expect(reply?.role === "assistant" && reply.time.completed === undefined && !reply.error).toBe(true);

    const waited = await mcp.call("oc_wait", { session_id: sessionId, timeout_s: 30 });
    expect(waited.data.status, waited.text).toBe("lost");
    const read = await mcp.call("oc_result", { session_id: sessionId });
    expect(read.data.status, read.text).toBe("lost");

    server.model.queue(text("back in business"));
    const next = await mcp.call("oc_delegate", { task: "after the restart" });
    expect(next.data.status, next.text).toBe("done");
    expect(next.data.answer).toBe("back in business");

    // A fresh MCP server that never saw the turn reads the same record: lost, not done.
    const fresh = await startMcpFor(server, { OPENCODE_CONDUCTOR_STATE_DIR: join(server.root, "state-fresh") });
    try {
      const again = await fresh.call("oc_result", { session_id: sessionId });
      expect(again.data.status, again.text).toBe("lost");
    } finally {
      await fresh.close();
    }
  });
});

describe("no opencode anywhere", () => {
  it("oc_status answers within 2 s with what to do", async () => {
    const home = mkdtempSync(join(tmpdir(), "occ-nobin-"));
    const mcp = await startMcp({ OPENCODE_BIN: "/nonexistent/opencode", OPENCODE_CONDUCTOR_STATE_DIR: join(home, "state"), ...xdg(home) });
    try {
      const started = Date.now();
      const status = await mcp.call("oc_status", {});
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(status.text).toMatch(/opencode was not found/);
      expect(status.text).toMatch(/OPENCODE_BIN/);
      expect(status.text).toMatch(/OPENCODE_URL/);
      expect(status.text.length).toBeLessThan(1_500);
    } finally {
      await mcp.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("the MCP server SIGKILLed during an instance task", () => {
  let server: TestOpencode;
  beforeAll(async () => {
    server = await startOpencode();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("leaves nothing it started alive 2 s later; the registry showed the running session", async () => {
    const project = await makeProjectDir(server, "killed", { gitInit: true });
    const stateDir = join(server.root, "state-killed");
    const env = {
      PATH: process.env.PATH ?? "",
      OPENCODE_URL: server.url,
      OPENCODE_PASSWORD: server.password,
      OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
      ...xdg(server.home),
      OPENCODE_CONFIG_CONTENT: JSON.stringify(offlineConfig(server.model.baseURL)),
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      npm_config_registry: "http://127.0.0.1:9/",
    };
    // The MCP server as its own process, so the test can SIGKILL it (the SDK transport owns its child otherwise).
    const child = spawn(process.execPath, [CLI], { env, stdio: ["pipe", "pipe", "pipe"] });
    let tree: ProcessInfo[] = [];
    const lines: string[] = [];
    let buffer = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      lines.push(...parts);
    });
    const send = (message: Record<string, unknown>) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    try {
      send({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "kill-test", version: "1" } } });
      send({ method: "notifications/initialized" });
      server.model.queue(toolCall("bash", { command: "sleep 300", description: "a long command" }), text("never finished"));
      send({ id: 2, method: "tools/call", params: { name: "oc_delegate", arguments: { task: "a long task", directory: project, isolation: "instance" } } });
      await server.model.waitForRequests(1, { kind: "chat", timeoutMs: 120_000 });

      const registry = JSON.parse(readFileSync(join(stateDir, "instances.json"), "utf8")) as {
        instances: Array<{ pid: number; sessions: Array<{ id: string }> }>;
      };
      expect(registry.instances).toHaveLength(1);
      const instance = registry.instances[0]!;
      expect(instance.sessions).toHaveLength(1); // recorded when the task started, while it runs
      expect(instance.sessions[0]!.id).toMatch(/^ses_/);
      expect(isProcessAlive(instance.pid)).toBe(true);
      // Everything below the MCP server once the turn runs its command: the instance's supervisor, opencode, the shell, `sleep`.
      tree = await treeWith(child.pid!, (p) => p.command === "sleep");
      expect(tree.map((p) => p.pid)).toContain(instance.pid);

      child.kill("SIGKILL");
      const killedAt = Date.now();
      const left = await untilGone(tree, 10_000);
      expect(describeProcesses(left)).toBe("");
      expect(Date.now() - killedAt).toBeLessThan(2_000);
    } finally {
      child.kill("SIGKILL");
      killAll(tree); // only if the test failed
      server.model.clear();
      expect(existsSync(stateDir)).toBe(true);
    }
  });
});
