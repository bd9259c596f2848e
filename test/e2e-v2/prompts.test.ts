// What a delegation carries besides its text, through the MCP server on a real opencode 2.x server:
// attached files, a named agent, sub-agents, a slash command, and compaction of the session. Each
// answer is compared with what the server recorded (its messages, read through the v2 API) and with
// what the scripted model was sent. Facts: docs/opencode-2x-behaviour.md ("Prompts", "Catalogs").
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useMcpOnV2 } from "../support/mcp-v2.js";
import type { V2Message } from "../support/opencode2.js";
import { SUMMARY_ANSWER, text } from "../support/scripted-model.js";

const h = useMcpOnV2({
  gitInit: true,
  // The 1.x `command` shape: 2.x migrates it (it reads `commands` natively too).
  config: { command: { hello: { template: "Say hello to $ARGUMENTS, politely", description: "greet" } } },
});
const call = (tool: string, args: Record<string, unknown>) => h.mcp.call(tool, args);
const recorded = (sessionId: string) => h.recorded(sessionId);

/** What the model was sent in a session's agent calls (not title or summary calls). */
const sentToModel = (sessionId: string) =>
  JSON.stringify(
    h.server.model
      .requestsFor(sessionId)
      .filter((r) => r.kind === "chat")
      .map((r) => r.body.messages),
  );
const userMessage = async (sessionId: string) => (await recorded(sessionId)).find((m) => m.type === "user")!;
const sessionCount = async () => ((await h.v2.request("session.list", {})) as { data: unknown[] }).data.length;

/** A refusal before anything started: an error naming the problem, no session, no model call. */
async function refused(args: Record<string, unknown>): Promise<string> {
  const [sessions, requests] = [await sessionCount(), h.server.model.requests.length];
  const r = await call("oc_delegate", { title: "refused", ...args });
  expect(r.isError, r.text).toBe(true);
  expect(await sessionCount()).toBe(sessions);
  expect(h.server.model.requests.length).toBe(requests);
  return r.text;
}

// First in the file on purpose: 2.x lists no agent and no command until the location's plugins have
// loaded; the conductor waits for that load before it checks a command name.
describe("a fresh opencode 2.x server", () => {
  it("lists nothing yet, and still runs a slash command as the first delegation: the model receives the expanded template", async () => {
    expect(((await h.v2.request("command.list", {})) as { data: unknown[] }).data).toEqual([]);
    h.server.model.queue(text("Hello, world!"));
    const r = await call("oc_delegate", { task: "the world", title: "v2 command", command: "hello" });
    expect(r.isError, r.text).toBe(false);
    expect(r.data).toMatchObject({ status: "done", answer: "Hello, world!" });
    const id = r.data.session_id as string;
    expect(await userMessage(id)).toMatchObject({ text: "Say hello to the world, politely" });
    expect(sentToModel(id)).toContain("Say hello to the world, politely");
    const agents = await call("oc_catalog", { kind: "agents" });
    for (const name of ["build", "plan", "general", "explore"]) expect(agents.text).toContain(name);
  });
});

describe("oc_delegate with a slash command on opencode 2.x", () => {
  it("an unknown command is refused with the server's commands", async () => {
    expect(await refused({ task: "x", command: "nope" })).toMatch(/Unknown command "nope"\. Available commands: .*hello/);
  });

  it("a command with a file: the model receives the template and the file", async () => {
    writeFileSync(join(h.server.directory, "greeting-target.txt"), "the target is Ada\n");
    h.server.model.queue(text("Hello, Ada!"));
    const r = await call("oc_delegate", { task: "the person in the file", title: "v2 command file", command: "hello", files: ["greeting-target.txt"] });
    expect(r.isError, r.text).toBe(false);
    const id = r.data.session_id as string;
    expect(await userMessage(id)).toMatchObject({
      text: "Say hello to the person in the file, politely",
      files: [{ name: "greeting-target.txt", mime: "text/plain" }],
    });
    expect(sentToModel(id)).toContain("Say hello to the person in the file, politely");
    expect(sentToModel(id)).toContain("the target is Ada");
  });
});

describe("oc_delegate with files on opencode 2.x", () => {
  it("a text file: recorded on the user message, and the model reads its name and content", async () => {
    writeFileSync(join(h.server.directory, "attached-notes.txt"), "the secret word is pelican\n");
    h.server.model.queue(text("pelican"));
    const r = await call("oc_delegate", { task: "what does the file say?", title: "v2 files", files: ["attached-notes.txt"] });
    expect(r.isError, r.text).toBe(false);
    expect(r.data).toMatchObject({ status: "done", answer: "pelican" });
    const id = r.data.session_id as string;
    const user = await userMessage(id);
    expect(user).toMatchObject({
      text: "what does the file say?",
      files: [{ name: "attached-notes.txt", mime: "text/plain", source: { type: "uri", uri: expect.stringMatching(/^file:\/\/.*attached-notes\.txt$/) } }],
    });
    expect(Buffer.from((user.files as Array<{ data: string }>)[0]!.data, "base64").toString()).toBe("the secret word is pelican\n");
    expect(sentToModel(id)).toContain("Attached file: attached-notes.txt");
    expect(sentToModel(id)).toContain("the secret word is pelican");
  });

  it("an image: the model receives it as an image part", async () => {
    const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
    writeFileSync(join(h.server.directory, "dot.png"), png);
    h.server.model.queue(text("a dot"));
    const r = await call("oc_delegate", { task: "what is in the picture?", title: "v2 image", files: ["dot.png"] });
    expect(r.isError, r.text).toBe(false);
    const id = r.data.session_id as string;
    expect(await userMessage(id)).toMatchObject({ files: [{ name: "dot.png", mime: "image/png" }] });
    const content = h.server.model
      .requestsFor(id)
      .find((q) => q.kind === "chat")!
      .body.messages!.at(-1)!.content;
    expect(content).toEqual([
      { type: "text", text: "what is in the picture?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${png.toString("base64")}` } },
    ]);
  });

  it("a PDF or a binary file, which 2.x would drop silently, is refused naming the version", async () => {
    writeFileSync(join(h.server.directory, "doc.pdf"), "%PDF-1.4\n%%EOF\n");
    writeFileSync(join(h.server.directory, "blob.dat"), Buffer.from([1, 0, 2, 0, 3]));
    const version = h.v2.identity.version;
    expect(await refused({ task: "read it", files: ["doc.pdf"] })).toContain(
      `opencode ${version} cannot pass the attached file "doc.pdf" (application/pdf) to the model`,
    );
    expect(await refused({ task: "read it", files: ["blob.dat"] })).toContain(
      `opencode ${version} cannot pass the attached file "blob.dat" (binary) to the model`,
    );
  });
});

describe("oc_delegate with agents on opencode 2.x", () => {
  it("agent: a new session is created with it (no switch), a continued one switches; the assistant messages record it", async () => {
    h.server.model.queue(text("planned"), text("built"));
    const r = await call("oc_delegate", { task: "make a plan", title: "v2 agent", agent: "plan" });
    expect(r.isError, r.text).toBe(false);
    expect(r.data).toMatchObject({ status: "done", answer: "planned", agent: "plan" });
    const sessionId = r.data.session_id as string;
    // The create request carried the agent: the session holds it from the start, no switch message.
    expect(await recorded(sessionId)).toMatchObject([{ type: "user" }, { type: "assistant", agent: "plan", finish: "stop" }]);
    expect(((await h.v2.request("session.get", { path: { sessionID: sessionId } })) as { data: { agent?: string } }).data.agent).toBe("plan");

    // 2.x keeps the agent on the session: another one for a later turn is a switch, a message of its own.
    const again = await call("oc_delegate", { task: "now build it", session_id: sessionId, agent: "build" });
    expect(again.data).toMatchObject({ status: "done", answer: "built", agent: "build" });
    const messages = await recorded(sessionId);
    expect(messages.map((m) => m.type)).toEqual(["user", "assistant", "agent-switched", "user", "assistant"]);
    expect(messages[2]).toMatchObject({ agent: "build" });
    expect(messages[4]).toMatchObject({ agent: "build", finish: "stop" });
  });

  it("model: a new session is created with it (no switch request), a continued one switches", async () => {
    h.server.model.for("backup").queue(text("from backup"));
    const r = await call("oc_delegate", { task: "which model?", title: "v2 model", model: "fake/backup" });
    expect(r.data, r.text).toMatchObject({ status: "done", answer: "from backup", model: "fake/backup" });
    const sessionId = r.data.session_id as string;
    const held = (await h.v2.request("session.get", { path: { sessionID: sessionId } })) as { data: { model?: { id: string; providerID: string } } };
    expect(held.data.model).toMatchObject({ id: "backup", providerID: "fake" });
    expect(
      h.server.model
        .requestsFor(sessionId)
        .filter((q) => q.kind === "chat")
        .map((q) => q.model),
    ).toEqual(["backup"]);

    h.server.model.for("scripted").queue(text("from scripted"));
    const again = await call("oc_delegate", { task: "and now?", session_id: sessionId, model: "fake/scripted" });
    expect(again.data, again.text).toMatchObject({ status: "done", answer: "from scripted", model: "fake/scripted" });
    expect(
      h.server.model
        .requestsFor(sessionId)
        .filter((q) => q.kind === "chat")
        .map((q) => q.model),
    ).toEqual(["backup", "scripted"]);
  });

  it("an unknown agent is refused with the server's agents (2.x would fail the turn without recording the prompt)", async () => {
    expect(await refused({ task: "x", agent: "nope" })).toMatch(/Unknown agent "nope"\. Available agents: .*build.*plan/);
    expect(await refused({ task: "x", agents: ["general", "nobody"] })).toContain('Unknown agent "nobody"');
  });

  it("agents: recorded as attachments on the user message, mentioned in its text, so the model reads them", async () => {
    h.server.model.queue(text("delegated"));
    const r = await call("oc_delegate", { task: "split the work", title: "v2 subagents", agents: ["general", "explore"] });
    expect(r.isError, r.text).toBe(false);
    const id = r.data.session_id as string;
    const user: V2Message = await userMessage(id);
    expect(user.text).toBe("split the work\n\n@general @explore");
    const at = (s: string) => user.text!.indexOf(s);
    expect(user.agents).toEqual([
      { name: "general", mention: { start: at("@general"), end: at("@general") + 8, text: "@general" } },
      { name: "explore", mention: { start: at("@explore"), end: at("@explore") + 8, text: "@explore" } },
    ]);
    expect(sentToModel(id)).toContain("split the work\\n\\n@general @explore");
  });

  it("agents with a command are refused (neither major passes them to the model)", async () => {
    expect(await refused({ task: "x", command: "hello", agents: ["general"] })).toContain("`agents` cannot go with `command`");
  });
});

describe("oc_session compact on opencode 2.x", () => {
  it("compacts with the session's model: a compaction message holds the summary, and the next turn starts from it", async () => {
    h.server.model.queue(text("something to compact"));
    const r = await call("oc_delegate", { task: "remember the word heron", title: "v2 compact" });
    const id = r.data.session_id as string;
    const c = await call("oc_session", { session_id: id, action: "compact" });
    expect(c.isError, c.text).toBe(false);
    expect(c.data.result).toEqual({ sessionId: id, compacted: true });
    const summaries = h.server.model.requestsFor(id).filter((q) => q.kind === "summary");
    expect(summaries).toHaveLength(1);
    expect(JSON.stringify(summaries[0]!.body.messages)).toContain("remember the word heron");
    const compaction = (await recorded(id)).at(-1)!;
    expect(compaction).toMatchObject({ type: "compaction", status: "completed", reason: "manual", summary: SUMMARY_ANSWER });

    h.server.model.queue(text("after the checkpoint"));
    const next = await call("oc_delegate", { session_id: id, task: "go on" });
    expect(next.data).toMatchObject({ status: "done", answer: "after the checkpoint" });
    const sent = h.server.model
      .requestsFor(id)
      .filter((q) => q.kind === "chat")
      .at(-1)!;
    expect(JSON.stringify(sent.body.messages)).toContain(`<summary>\\n${SUMMARY_ANSWER}\\n</summary>`);
    expect(JSON.stringify(sent.body.messages)).not.toContain("remember the word heron");
  });

  it("a model for the summary is refused: 2.x compacts with the session's own model", async () => {
    h.server.model.queue(text("ok"));
    const r = await call("oc_delegate", { task: "hi", title: "v2 compact model" });
    const c = await call("oc_session", { session_id: r.data.session_id as string, action: "compact", model: "fake/backup" });
    expect(c.isError).toBe(true);
    expect(c.text).toContain("compacts with the session's own model");
    expect(h.server.model.requestsFor(r.data.session_id as string).filter((q) => q.kind === "summary")).toHaveLength(0);
  });
});
