// The high-level tools through the MCP server (stdio, the built dist/cli.js) against a real opencode
// 2.x server: the v2 engine is picked by asking the server, and every answer is compared with what
// the server recorded (its messages, read straight through the v2 API). The scripted model speaks
// to 2.x's tools as they are (`write {path}`, `shell {command}`). Facts: docs/opencode-2x-behaviour.md.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { specInfo as v2SpecInfo } from "../../generated/v2/operations.js";
import type { OpencodeV2Client } from "../../src/client/v2/index.js";
import type { McpSession } from "../support/mcp-client.js";
import { startMcpOnV2, type McpOnV2 } from "../support/mcp-v2.js";
import type { V2Message } from "../support/opencode2.js";
import type { TestOpencode } from "../support/opencode.js";
import { delay, hang, httpError, text, toolCall } from "../support/scripted-model.js";

let server: TestOpencode;
let mcp: McpSession;
let v2: OpencodeV2Client;
let recorded: McpOnV2["recorded"];
let stop: () => Promise<void>;

beforeAll(async () => {
  // A disabled MCP server, so oc_catalog mcp has a row to read back (nothing is started).
  const config = { mcp: { probe: { type: "local", command: ["true"], enabled: false } } };
  ({ server, mcp, v2, recorded, stop } = await startMcpOnV2({ gitInit: true, config }, {}));
});
// A test that failed must not leave its script to the next one.
beforeEach(() => server.model.clear());
afterAll(() => stop?.());

const textOf = (m: V2Message | undefined) => (m?.content ?? []).flatMap((c) => (c.type === "text" && c.text ? [c.text] : [])).join("\n");

/** The outcome event the server sent for the session's last execution is not readable later; its last step is. */
async function lastStep(sessionID: string): Promise<V2Message> {
  return (await recorded(sessionID)).filter((m) => m.type === "assistant").at(-1)!;
}

describe("oc_status on opencode 2.x", () => {
  it("names the engine and the server version", async () => {
    const r = await mcp.call("oc_status");
    expect(r.isError, r.text).toBe(false);
    expect(r.data).toMatchObject({ engine: "v2", version: v2.identity.version, healthy: true });
    expect(r.text).toContain("(engine v2)");
    expect(r.text).toContain("v2 API");
    // Its spec against the vendored 2.x one (spec/v2/), not the 1.x pin.
    expect(r.data.compatibility).toMatchObject({ spec: { pinned: v2SpecInfo.opencodeVersion, same_as_pinned: false } });
    expect(r.text).toContain(`Its spec vs the pinned ${v2SpecInfo.opencodeVersion}:`);
  });
});

describe("oc_delegate on opencode 2.x", () => {
  it("text: done with the answer the server recorded", async () => {
    server.model.queue(text("hello from two"));
    const r = await mcp.call("oc_delegate", { task: "say hello", title: "v2 text" });
    expect(r.isError, r.text).toBe(false);
    const id = r.data.session_id as string;
    expect(r.data).toMatchObject({ status: "done", answer: "hello from two" });
    const last = await lastStep(id);
    expect(last).toMatchObject({ finish: "stop" });
    expect(textOf(last)).toBe(r.data.answer);
  });

  it("write: the 2.x write tool (path) creates the file; the file is reported", async () => {
    server.model.queue(toolCall("write", { path: "from-v2.txt", content: "written by 2.x\n" }), text("wrote it"));
    const r = await mcp.call("oc_delegate", { task: "write the file", title: "v2 write" });
    expect(r.isError, r.text).toBe(false);
    expect(r.data).toMatchObject({ status: "done", answer: "wrote it" });
    expect(readFileSync(join(server.directory, "from-v2.txt"), "utf8")).toBe("written by 2.x\n");
    expect(JSON.stringify(r.data.files)).toContain("from-v2.txt");
    const steps = (await recorded(r.data.session_id as string)).filter((m) => m.type === "assistant");
    expect(steps[0]?.content?.[0]).toMatchObject({ type: "tool", name: "write", state: { status: "completed" } });
  });

  it("bash: the shell tool runs the command", async () => {
    server.model.queue(toolCall("shell", { command: "echo ran > shell-v2.txt" }), text("ran it"));
    const r = await mcp.call("oc_delegate", { task: "run it", title: "v2 shell" });
    expect(r.isError, r.text).toBe(false);
    expect(r.data).toMatchObject({ status: "done", answer: "ran it" });
    expect(readFileSync(join(server.directory, "shell-v2.txt"), "utf8")).toBe("ran\n");
  });

  it("background (wait: false) then oc_wait: done, as recorded", async () => {
    server.model.queue(delay(800, text("later answer")));
    const started = await mcp.call("oc_delegate", { task: "take your time", title: "v2 background", wait: false });
    expect(started.isError, started.text).toBe(false);
    expect(started.data.status).toBe("running");
    const id = started.data.session_id as string;
    const waited = await mcp.call("oc_wait", { session_id: id, timeout_s: 60 });
    expect(waited.isError, waited.text).toBe(false);
    expect(waited.data).toMatchObject({ status: "done", answer: "later answer" });
    expect(textOf(await lastStep(id))).toBe("later answer");
    const result = await mcp.call("oc_result", { session_id: id });
    expect(result.data).toMatchObject({ state: "idle", status: "done", answer: "later answer" });
  });

  it("fallback: a 400 from the first model ends done on the backup, in the same session, with the switch reported", async () => {
    server.model.for("scripted").queue(httpError(400));
    server.model.for("backup").queue(text("from the backup"));
    const r = await mcp.call("oc_delegate", { task: "fall back", title: "v2 fallback", model: "fake/scripted", fallback_models: ["fake/backup"] });
    expect(r.isError, r.text).toBe(false);
    expect(r.data).toMatchObject({ status: "done", answer: "from the backup" });
    expect(JSON.stringify(r.data.fallbacks)).toContain("provider.invalid-request");
    const steps = (await recorded(r.data.session_id as string)).filter((m) => m.type === "assistant");
    // 2.x cannot delete the failed attempt: it stays recorded, and the backup continued the session.
    expect(steps[0]).toMatchObject({ finish: "error", error: { type: "provider.invalid-request", status: 400 } });
    expect(steps.at(-1)).toMatchObject({ finish: "stop", model: { id: "backup" } });
  });
});

describe("control on opencode 2.x", () => {
  it("oc_send steer joins the running turn: the next model call sees the message, one outcome for both", async () => {
    server.model.queue(delay(1500, toolCall("shell", { command: "true" })), text("saw the steer"));
    const started = await mcp.call("oc_delegate", { task: "first task", title: "v2 steer", wait: false });
    const id = started.data.session_id as string;
    const sent = await mcp.call("oc_send", { session_id: id, message: "also do this", delivery: "steer" });
    expect(sent.isError, sent.text).toBe(false);
    expect(sent.data).toMatchObject({ status: "running", delivery: "steer" });
    const waited = await mcp.call("oc_wait", { session_id: id, timeout_s: 60 });
    expect(waited.data).toMatchObject({ status: "done", answer: "saw the steer" });
    const users = (await recorded(id)).filter((m) => m.type === "user").map((m) => m.text);
    expect(users).toEqual(["first task", "also do this"]);
    // Not interrupted: the tool step finished, and the model's second call carried the steer.
    const steps = (await recorded(id)).filter((m) => m.type === "assistant");
    expect(steps.map((s) => s.finish)).toEqual(["tool-calls", "stop"]);
    expect(JSON.stringify(server.model.requests.at(-1)?.body.messages)).toContain("also do this");
  });

  it("oc_interrupt stops a running turn: interrupted, with the partial text the server kept", async () => {
    server.model.queue(hang({ text: "partial " }));
    const started = await mcp.call("oc_delegate", { task: "never ends", title: "v2 interrupt", wait: false });
    const id = started.data.session_id as string;
    // Interrupt once the model is answering (before that there is no step to keep text in).
    await server.model.waitForRequests(1, { sessionId: id, timeoutMs: 60_000 });
    const r = await mcp.call("oc_interrupt", { session_id: id });
    expect(r.isError, r.text).toBe(false);
    expect(r.data).toMatchObject({ status: "interrupted" });
    const last = await lastStep(id);
    expect(last).toMatchObject({ finish: "error", error: { type: "aborted" } });
  });

  it("oc_delegate_parallel runs 12 tasks at once, each done as recorded", async () => {
    for (let i = 0; i < 12; i++) server.model.queue(text(`parallel answer`));
    const tasks = Array.from({ length: 12 }, (_, i) => ({ task: `task ${i}`, title: `v2 parallel ${i}` }));
    const r = await mcp.call("oc_delegate_parallel", { tasks, concurrency: 12 }, { timeoutMs: 180_000 });
    expect(r.isError, r.text).toBe(false);
    const results = r.data.results as Array<{ session_id: string; status: string; answer: string }>;
    expect(results).toHaveLength(12);
    for (const one of results) {
      expect(one).toMatchObject({ status: "done", answer: "parallel answer" });
      expect(textOf(await lastStep(one.session_id))).toBe("parallel answer");
    }
  });
});

describe("sessions, models, catalog and the API on opencode 2.x", () => {
  it("oc_session diff, fork, revert and unrevert", async () => {
    server.model.queue(toolCall("write", { path: "revert-me.txt", content: "v1\n" }), text("wrote"));
    const r = await mcp.call("oc_delegate", { task: "write revert-me", title: "v2 revert" });
    const id = r.data.session_id as string;
    const messageId = r.data.message_id as string;
    expect(messageId).toMatch(/^msg_/);

    const diff = await mcp.call("oc_session", { session_id: id, action: "diff" });
    expect(diff.isError, diff.text).toBe(false);
    expect(diff.text).toContain("revert-me.txt");

    const fork = await mcp.call("oc_session", { session_id: id, action: "fork" });
    expect(fork.isError, fork.text).toBe(false);
    expect(fork.text).toContain("(fork #1)");

    const revert = await mcp.call("oc_session", { session_id: id, action: "revert", message_id: messageId });
    expect(revert.isError, revert.text).toBe(false);
    expect(existsSync(join(server.directory, "revert-me.txt"))).toBe(false);
    const session = (await v2.request("session.get", { path: { sessionID: id } })) as { data: { revert?: { messageID: string } } };
    expect(session.data.revert?.messageID).toBe(messageId);

    const unrevert = await mcp.call("oc_session", { session_id: id, action: "unrevert" });
    expect(unrevert.isError, unrevert.text).toBe(false);
    expect(readFileSync(join(server.directory, "revert-me.txt"), "utf8")).toBe("v1\n");
  });

  it("oc_session says clearly what 2.x cannot do (todo, archive)", async () => {
    server.model.queue(text("ok"));
    const r = await mcp.call("oc_delegate", { task: "hi", title: "v2 unsupported" });
    const todo = await mcp.call("oc_session", { session_id: r.data.session_id as string, action: "todo" });
    expect(todo.isError).toBe(true);
    expect(todo.text).toContain(`opencode ${v2.identity.version} cannot list a session's todo items`);
    const archive = await mcp.call("oc_session", { session_id: r.data.session_id as string, action: "archive" });
    expect(archive.isError).toBe(true);
    expect(archive.text).toContain("cannot archive a session");
  });

  it("oc_models lists the 2.x models without their settings (no apiKey); oc_catalog lists agents, config (redacted), mcp, projects", async () => {
    const models = await mcp.call("oc_models", {});
    expect(models.isError, models.text).toBe(false);
    expect(models.text).toContain("fake/scripted");
    expect(models.text).toContain("fake/backup");
    expect(JSON.stringify(models.raw)).not.toMatch(/apiKey|baseURL/);
    const agents = await mcp.call("oc_catalog", { kind: "agents" });
    expect(agents.isError, agents.text).toBe(false);
    expect(agents.text).toContain("build");
    const lsp = await mcp.call("oc_catalog", { kind: "lsp" });
    expect(lsp.isError).toBe(true);
    expect(lsp.text).toContain("cannot list its lsp");
    // The config: the server's own sources, read back from it, with every secret redacted.
    const config = await mcp.call("oc_catalog", { kind: "config" });
    expect(config.isError, config.text).toBe(false);
    const sources = (
      config.data.items as { sources: Array<{ type: string; path: string; info?: { providers?: Record<string, { settings?: Record<string, unknown> }> } }> }
    ).sources;
    const stored = (await v2.request("config.get", {})) as Array<{ type: string; path: string }>;
    expect(sources.map((e) => [e.type, e.path])).toEqual(stored.map((e) => [e.type, e.path]));
    expect(sources[0]!.info?.providers?.fake?.settings).toEqual({ baseURL: server.model.baseURL, apiKey: "[redacted]", chunkTimeout: 2000 });
    expect(config.text).not.toContain('"apiKey": "none"');
    // MCP servers and projects, as the server lists them.
    const mcpServers = await mcp.call("oc_catalog", { kind: "mcp" });
    expect(mcpServers.isError, mcpServers.text).toBe(false);
    expect(mcpServers.data.items).toEqual([{ name: "probe", status: "disabled" }]);
    expect(((await v2.request("mcp.list", {})) as { data: unknown[] }).data).toEqual([{ name: "probe", status: { status: "disabled" } }]);
    const projects = await mcp.call("oc_catalog", { kind: "projects" });
    expect(projects.isError, projects.text).toBe(false);
    const storedProjects = (await v2.request("project.list", {})) as Array<{ id: string; canonical: string; time: { created: number } }>;
    expect(projects.data.items).toEqual(
      storedProjects.map((p) => expect.objectContaining({ id: p.id, worktree: p.canonical, vcs: "git", created: new Date(p.time.created).toISOString() })),
    );
    expect(storedProjects.map((p) => p.canonical)).toContain(server.directory);
  });

  it("oc_api_ops lists the server's v2 operations and oc_api calls one", async () => {
    const ops = await mcp.call("oc_api_ops", { search: "session active" });
    expect(ops.isError, ops.text).toBe(false);
    const ids = (ops.data.operations as Array<{ id: string }>).map((o) => o.id);
    const active = v2.routes.get("session.active").id;
    expect(ids).toContain(active);
    const r = await mcp.call("oc_api", { operation: active });
    expect(r.isError, r.text).toBe(false);
    expect(r.data.result).toEqual(await v2.request("session.active", {}));
  });
});
