// oc_delegate with isolation "instance" through the built MCP server: a private guarded opencode
// for the directory, listed by oc_instances (no password), sessions routed to it, stopped on exit.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcp, type McpSession } from "../../support/mcp-client.js";
import { makeProjectDir, offlineConfig, startOpencode, xdg, type TestOpencode } from "../../support/opencode.js";
import { text, toolCall } from "../../support/scripted-model.js";

let server: TestOpencode;
let mcp: McpSession | undefined;
let project: string;
let stateDir: string;

beforeAll(async () => {
  server = await startOpencode();
  project = await makeProjectDir(server, "isolated", { gitInit: true });
  stateDir = join(server.root, "state");
  mcp = await startMcp({
    OPENCODE_URL: server.url,
    OPENCODE_PASSWORD: server.password,
    OPENCODE_CONDUCTOR_TOOLSETS: "all",
    OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
    // What the private instance inherits: the harness's home and the scripted provider, offline.
    ...xdg(server.home),
    OPENCODE_CONFIG_CONTENT: JSON.stringify(offlineConfig(server.model.baseURL)),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    npm_config_registry: "http://127.0.0.1:9/",
  });
});
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
});

describe("isolation: instance", () => {
  let sessionId: string;
  let pid: number;

  it("runs the task on a private server for the directory and writes the file", async () => {
    const file = join(project, "isolated.txt");
    server.model.queue(toolCall("write", { filePath: file, content: "from a private instance\n" }), text("Done in isolation."));
    const r = await mcp!.call("oc_delegate", { task: "Write isolated.txt", directory: project, isolation: "instance" }, { timeoutMs: 240_000 });
    expect(r.isError, r.text).toBe(false);
    expect(r.data.status).toBe("done");
    expect(readFileSync(file, "utf8")).toBe("from a private instance\n");
    expect(r.data.attach).toContain("opencode attach http://127.0.0.1:");
    expect(r.text).toContain("Watch it live");
    sessionId = r.data.session_id as string;
    // It ran on another server than the shared one (both share the harness's data dir, so the
    // session itself is stored where either can read it, as with a user's own opencode).
    expect(r.data.attach).not.toContain(server.url);
  });

  it("lists the instance without its password; the registry keeps it, 0600", async () => {
    const listed = await mcp!.call("oc_instances", { action: "list" });
    const rows = listed.data.instances as Array<{ pid: number; directory: string; url: string }>;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.directory).toBe(project);
    pid = rows[0]!.pid;
    const registry = join(stateDir, "instances.json");
    expect(statSync(registry).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(registry, "utf8")).instances[0];
    expect(stored.password).toBeTruthy();
    expect(JSON.stringify(listed)).not.toContain(stored.password);
    expect(stored.sessions.map((s: { id: string }) => s.id)).toContain(sessionId);
  });

  it("routes oc_wait and oc_result for that session to the instance", async () => {
    const waited = await mcp!.call("oc_wait", { session_id: sessionId });
    expect(waited.data.status, waited.text).toBe("done");
    expect(waited.data.answer).toBe("Done in isolation.");
    const state = await mcp!.call("oc_result", { session_id: sessionId });
    expect(state.data.state).toBe("idle");
  });

  it("stops the instance when the MCP server exits", async () => {
    expect(isAlive(pid)).toBe(true);
    await mcp!.close();
    mcp = undefined;
    const deadline = Date.now() + 30_000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100)); // bounded check of a process we cannot subscribe to
    expect(isAlive(pid)).toBe(false);
    expect(existsSync(join(stateDir, "instances.json")) ? JSON.parse(readFileSync(join(stateDir, "instances.json"), "utf8")).instances : []).toEqual([]);
  });
});

function isAlive(p: number): boolean {
  try {
    process.kill(p, 0);
    return true;
  } catch {
    return false;
  }
}
