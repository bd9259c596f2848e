// The built MCP server over stdio, driven by the SDK's Client, against real opencode + the scripted model.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpFor, type McpSession } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { text, toolCall } from "../../support/scripted-model.js";
import { readMessages } from "../../support/turns.js";
import { connect } from "../../../src/client/connect.js";

let server: TestOpencode;
let mcp: McpSession;

beforeAll(async () => {
  server = await startOpencode({ permission: { bash: "ask" } });
  mcp = await startMcpFor(server, { OPENCODE_CONDUCTOR_AUDIT: join(server.root, "audit.jsonl") });
});
afterAll(async () => {
  await mcp?.close();
  await server?.stop();
});

function expectNoSecret(value: unknown) {
  expect(JSON.stringify(value)).not.toContain(server.password);
}

describe("MCP server over stdio", () => {
  it("lists the default tools with annotations and output schemas", async () => {
    const { tools } = await mcp.client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of [
      "oc_delegate",
      "oc_delegate_parallel",
      "oc_ask",
      "oc_send",
      "oc_wait",
      "oc_result",
      "oc_interrupt",
      "oc_pending",
      "oc_answer",
      "oc_sessions",
      "oc_session",
      "oc_status",
      "oc_models",
      "oc_catalog",
    ]) {
      expect(names).toContain(name);
    }
    for (const tool of tools) {
      // Listed only when true (false is MCP's default): the write tools say nothing, the others say so.
      expect(tool.annotations?.readOnlyHint ?? false, tool.name).toBe(
        ["oc_delegate", "oc_delegate_parallel", "oc_send", "oc_interrupt", "oc_answer", "oc_session", "oc_api"].includes(tool.name) ? false : true,
      );
      expect(tool.outputSchema, tool.name).toBeDefined();
    }
    expect(mcp.client.getInstructions()).toContain("oc_delegate");
  });

  it("oc_status reports the server", async () => {
    const r = await mcp.call("oc_status");
    expect(r.isError).toBe(false);
    expect(r.data.version).toBe("1.18.33");
    expect(r.data.default_model).toBe("fake/scripted");
    expectNoSecret(r);
  });

  it("oc_delegate writes a file, sending progress notifications", async () => {
    const file = join(server.directory, "from-mcp.txt");
    server.model.queue(toolCall("write", { filePath: file, content: "written through MCP\n" }), text("I wrote the file."));
    const progress: string[] = [];
    const r = await mcp.call("oc_delegate", { task: "Write from-mcp.txt", permissions: "auto" }, { onprogress: (p) => progress.push(p.message ?? "") });
    expect(r.isError, r.text).toBe(false);
    expect(r.data.status).toBe("done");
    expect(r.data.answer).toBe("I wrote the file.");
    expect(readFileSync(file, "utf8")).toBe("written through MCP\n");
    expect((r.data.files as { path: string }[]).some((f) => file.endsWith(f.path))).toBe(true);
    expect(r.text).toMatch(/^DONE/);
    expect(progress.some((m) => m.includes("write"))).toBe(true);
    expectNoSecret(r);
  });

  it("answers BLOCKED, then oc_answer and oc_wait finish the turn", async () => {
    const marker = join(server.directory, "approved.txt");
    server.model.queue(toolCall("bash", { command: `echo approved > ${marker}`, description: "write marker" }), text("Approved and done."));
    const blocked = await mcp.call("oc_delegate", { task: "Run the command", permissions: "agent" });
    expect(blocked.data.status, blocked.text).toBe("blocked");
    expect(blocked.text).toContain("BLOCKED");
    const pending = blocked.data.pending as { id: string; kind: string; answer_with: string }[];
    expect(pending[0]!.kind).toBe("permission");
    expect(blocked.text).toContain(`oc_answer {"request_id":"${pending[0]!.id}"`);
    expect(existsSync(marker)).toBe(false);

    const listed = await mcp.call("oc_pending", { session_id: blocked.data.session_id });
    expect((listed.data.requests as { id: string }[]).map((p) => p.id)).toContain(pending[0]!.id);

    const answered = await mcp.call("oc_answer", { request_id: pending[0]!.id, decision: "once" });
    expect(answered.isError, answered.text).toBe(false);
    const done = await mcp.call("oc_wait", { session_id: blocked.data.session_id });
    expect(done.data.status, done.text).toBe("done");
    expect(done.data.answer).toBe("Approved and done.");
    expect(readFileSync(marker, "utf8").trim()).toBe("approved");
  });

  it("returns a running handle at timeout_s, and oc_wait picks the work up", async () => {
    server.model.queue(text("Finally done.", { delayMs: 5_000 }));
    const started = await mcp.call("oc_delegate", { task: "Slow task", timeout_s: 1 });
    expect(started.data.status, started.text).toBe("running");
    expect(started.text).toContain("oc_wait");
    const result = await mcp.call("oc_wait", { session_id: started.data.session_id });
    expect(result.data.status).toBe("done");
    expect(result.data.answer).toBe("Finally done.");
  });

  it("turns bad input into a clear error, not a crash", async () => {
    const missingDir = await mcp.call("oc_delegate", { task: "x", directory: "/definitely/not/here" });
    expect(missingDir.isError).toBe(true);
    expect(missingDir.text).toContain("does not exist");
    expect(missingDir.text).not.toMatch(/\n\s+at /); // no stack trace
    const badModel = await mcp.call("oc_delegate", { task: "x", model: "nope-model" });
    expect(badModel.isError).toBe(true);
    expect(badModel.text).toMatch(/No model matches "nope-model"/);
    const badSession = await mcp.call("oc_wait", { session_id: "nope" });
    expect(badSession.isError).toBe(true);
    expect(badSession.text).toContain("ses_");
  });

  it("lists sessions and runs session actions", async () => {
    const list = await mcp.call("oc_sessions", { limit: 5 });
    const sessions = list.data.sessions as { id: string }[];
    expect(sessions.length).toBeGreaterThan(0);
    const info = await mcp.call("oc_session", { session_id: sessions[0]!.id, action: "info" });
    expect(info.isError, info.text).toBe(false);
    const renamed = await mcp.call("oc_session", { session_id: sessions[0]!.id, action: "rename", title: "renamed by mcp" });
    expect((renamed.data.result as { title: string }).title).toBe("renamed by mcp");
  });

  it("offers each session's transcript and todo list as resources, the same as opencode records", async () => {
    server.model.queue(text("Answer kept as a resource."));
    const changed = new Promise<void>((resolve) => mcp.client.setNotificationHandler("notifications/resources/list_changed", () => resolve()));
    const r = await mcp.call("oc_delegate", { task: "Say something", permissions: "auto" });
    const id = r.data.session_id as string;
    const uri = `opencode://session/${id}/transcript`;
    // The listing answers at once from what the server has read; it reads again in the background
    // and says so with resources/list_changed, as a client would see it.
    let { resources } = await mcp.client.listResources();
    if (!resources.some((x) => x.uri === uri)) {
      await changed;
      ({ resources } = await mcp.client.listResources());
    }
    expect(resources.map((x) => x.uri)).toContain(uri);
    const transcript = await mcp.client.readResource({ uri: `opencode://session/${id}/transcript` });
    const page = JSON.parse((transcript.contents[0] as { text: string }).text) as { messages: Array<{ id: string }> };
    const recorded = await readMessages(connect({ url: server.url, password: server.password, directory: server.directory }), id);
    expect(page.messages.map((m) => m.id)).toEqual(recorded.map((m) => m.info.id));
    expect((transcript.contents[0] as { text: string }).text).toContain("Answer kept as a resource.");
    const todo = await mcp.client.readResource({ uri: `opencode://session/${id}/todo` });
    expect(JSON.parse((todo.contents[0] as { text: string }).text)).toEqual([]);
    expectNoSecret([transcript, todo, resources]);
  });

  it("a subscribed session resource sends resources/updated while its turn runs", async () => {
    expect(mcp.client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true, listChanged: true });
    server.model.queue(text("Slow answer.", { delayMs: 1_500 }));
    const started = await mcp.call("oc_delegate", { task: "Answer slowly", permissions: "auto", wait: false });
    const uri = `opencode://session/${started.data.session_id as string}/transcript`;
    const updated = new Promise<string>((resolve) => mcp.client.setNotificationHandler("notifications/resources/updated", (n) => resolve(n.params.uri)));
    await mcp.client.subscribeResource({ uri });
    const done = await mcp.call("oc_wait", { session_id: started.data.session_id });
    expect(done.data.status, done.text).toBe("done");
    expect(await updated).toBe(uri);
    await mcp.client.unsubscribeResource({ uri });
    await expect(mcp.client.subscribeResource({ uri: "opencode://audit" })).rejects.toThrow(/Only session resources/);
  });

  it("oc_models and oc_catalog describe the server without secrets", async () => {
    const models = await mcp.call("oc_models");
    expect((models.data.models as { id: string }[]).map((m) => m.id)).toEqual(expect.arrayContaining(["fake/scripted", "fake/backup"]));
    const agents = await mcp.call("oc_catalog", { kind: "agents" });
    expect(agents.isError, agents.text).toBe(false);
    const config = await mcp.call("oc_catalog", { kind: "config" });
    expectNoSecret(config);
  });

  it("audits every call that changed something, without secrets", async () => {
    const path = join(server.root, "audit.jsonl");
    const raw = readFileSync(path, "utf8");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(raw).not.toContain(server.password);
    const entries = raw
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    const tools = entries.map((e) => e.tool);
    // Read-only tools (oc_status, oc_wait, oc_pending, oc_sessions, oc_models, oc_catalog) are not audited.
    expect(tools).not.toContain("oc_status");
    expect(tools).not.toContain("oc_wait");
    expect(tools.filter((t) => t === "oc_delegate").length).toBeGreaterThanOrEqual(5);
    const answer = entries.find((e) => e.tool === "oc_answer");
    expect(answer).toMatchObject({ decision: "once", by: "model", outcome: "ok", client: { name: "e2e-test-client", version: "1.0.0" } });
    const write = entries.find((e) => e.tool === "oc_delegate" && e.outcome === "done" && e.files?.length);
    expect(write).toMatchObject({ model: "fake/scripted", prompt: { first_line: "Write from-mcp.txt", length: 18 } });
    expect(write.prompt.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(write.tokens).toBeGreaterThan(0);
    expect(entries.filter((e) => e.tool === "oc_session").map((e) => e.detail.action)).toEqual(["info", "rename"]);
    expect(entries.find((e) => e.outcome === "error")?.error).toContain("does not exist");
  });
});
