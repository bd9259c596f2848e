// delegate() against the real opencode with the scripted model: new, continued and forked sessions,
// slash commands, attached files, agents and sub-agents, model resolution, directories and the
// readonly preset. One server (git project) for the file; each test makes the sessions it works on
// and queues its own model steps, and an afterEach checks it used them all, so no test depends on
// another's state.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dumpMessages, useConductor, userTexts } from "../../support/conductor.js";
import { UsageError } from "../../../src/core/errors.js";
import { ModelResolutionError } from "../../../src/core/catalog/model-resolve.js";
import { makeProjectDir } from "../../support/opencode.js";
import { text, toolCall } from "../../support/scripted-model.js";

const h = useConductor({
  gitInit: true,
  config: {
    provider: { fake: { models: { "alpha-1": { name: "Alpha 1" }, "alpha-2": { name: "Alpha 2" } } } },
    command: { hello: { template: "Say hello to $ARGUMENTS", description: "greet" } },
  },
});

const sessionCount = async () => (await h.conductor.client.call("session.list")).length;

/** A session with one finished text turn of its own ("earlier task" → "Earlier answer."). */
async function earlierSession(): Promise<string> {
  h.oc.model.queue(text("Earlier answer."));
  const r = await h.conductor.delegate({ task: "earlier task", detail: "final" });
  expect(r.status).toBe("done");
  return r.sessionId;
}

describe("delegate (e2e)", () => {
  afterEach(() => {
    expect(h.oc.model.leftovers(), "model steps this test queued but nothing used").toEqual({});
  });

  it("runs a task that writes a file: done, answer, file on disk and in the git diff, tokens, model", async () => {
    const file = join(h.oc.directory, "hello.txt");
    h.oc.model.queue(toolCall("write", { filePath: file, content: "hello\n" }), text("I wrote hello.txt."));
    const progress: string[] = [];
    const r = await h.conductor.delegate({ task: "create hello.txt", onProgress: (p) => progress.push(p.kind) });
    expect(r).toMatchObject({ status: "done", answer: "I wrote hello.txt.", model: "fake/scripted", agent: "build", directory: h.oc.directory });
    expect(readFileSync(file, "utf8")).toBe("hello\n");
    // From the per-turn diff (git project): status and line counts. Under heavy load opencode's
    // snapshot of the turn may not be ready at idle; then the path comes from the tool call.
    expect(r.files).toEqual([expect.objectContaining({ path: "hello.txt" })]);
    if (r.files![0]!.status) expect(r.files![0]).toEqual({ path: "hello.txt", status: "added", additions: 1, deletions: 0 });
    expect(r.tools).toEqual([expect.objectContaining({ tool: "write", status: "completed" })]);
    expect(r.tokens!.total).toBeGreaterThan(0);
    expect(r.tokens!.input).toBeGreaterThan(0);
    expect(r.messageId).toMatch(/^msg_/);
    expect(progress).toEqual(expect.arrayContaining(["busy", "tool", "file"]));
    await dumpMessages(h, "write-git", r.sessionId);
  });

  it("continues the session: the model sees the earlier turn", async () => {
    const first = await earlierSession();
    h.oc.model.queue(text("Still here."));
    const r = await h.conductor.delegate({ sessionId: first, task: "what did you do?", detail: "final" });
    expect(r).toEqual({ sessionId: first, status: "done", answer: "Still here.", directory: h.oc.directory });
    expect(userTexts(h.oc, first)).toEqual([expect.stringContaining("earlier task"), expect.stringContaining("what did you do?")]);
  });

  it("forks the session: a new id whose history holds the first turn; the original is untouched", async () => {
    const first = await earlierSession();
    const before = (await h.conductor.client.call("session.messages", { path: { sessionID: first } })).length;
    h.oc.model.queue(text("Forked answer."));
    const r = await h.conductor.delegate({ sessionId: first, fork: true, task: "try another way", detail: "full" });
    expect(r.sessionId).not.toBe(first);
    expect(r).toMatchObject({ status: "done", answer: "Forked answer." });
    expect(r.transcript).toEqual([
      { role: "user", text: "try another way" },
      { role: "assistant", text: "Forked answer." },
    ]);
    expect(userTexts(h.oc, r.sessionId)).toEqual([expect.stringContaining("earlier task"), expect.stringContaining("try another way")]);
    expect((await h.conductor.client.call("session.messages", { path: { sessionID: first } })).length).toBe(before);
  });

  it("runs a slash command: the model gets the expanded template", async () => {
    h.oc.model.queue(text("Hello, world!"));
    const r = await h.conductor.delegate({ command: "hello", task: "the world" });
    expect(r).toMatchObject({ status: "done", answer: "Hello, world!" });
    expect(userTexts(h.oc, r.sessionId).join("\n")).toContain("Say hello to the world");
  });

  it("rejects an unknown command, listing the known ones, before creating a session", async () => {
    const count = await sessionCount();
    const error = await h.conductor.delegate({ command: "nope", task: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/Unknown command "nope".*hello/);
    expect(await sessionCount()).toBe(count);
  });

  it("attaches a file: recorded as a file part of the user message, and the model reads its content", async () => {
    writeFileSync(join(h.oc.directory, "attached-notes.txt"), "the secret word is pelican\n");
    h.oc.model.queue(text("pelican"));
    const r = await h.conductor.delegate({ task: "what does the file say?", files: ["attached-notes.txt"] });
    expect(r).toMatchObject({ status: "done", answer: "pelican" });
    const [user] = await h.conductor.client.call("session.messages", { path: { sessionID: r.sessionId } });
    expect(user!.parts).toContainEqual(expect.objectContaining({ type: "file", mime: "text/plain", filename: "attached-notes.txt" }));
    // 1.x reads the file for the model (a synthetic Read call in the user message).
    expect(userTexts(h.oc, r.sessionId).join("\n")).toContain("the secret word is pelican");
  });

  it("runs the named agent: recorded on the user and the assistant message", async () => {
    h.oc.model.queue(text("planned"));
    const r = await h.conductor.delegate({ task: "make a plan", agent: "plan" });
    expect(r).toMatchObject({ status: "done", answer: "planned", agent: "plan" });
    const messages = await h.conductor.client.call("session.messages", { path: { sessionID: r.sessionId } });
    expect(messages.map((m) => [m.info.role, m.info.agent])).toEqual([
      ["user", "plan"],
      ["assistant", "plan"],
    ]);
  });

  it("mentions sub-agents: an agent part on the user message, and the model is told to use it", async () => {
    h.oc.model.queue(text("delegated"));
    const r = await h.conductor.delegate({ task: "split the work", agents: ["general"] });
    expect(r).toMatchObject({ status: "done", answer: "delegated" });
    const [user] = await h.conductor.client.call("session.messages", { path: { sessionID: r.sessionId } });
    expect(user!.parts).toContainEqual(expect.objectContaining({ type: "agent", name: "general" }));
    expect(userTexts(h.oc, r.sessionId).join("\n")).toContain("call the task tool with subagent: general");
  });

  it("rejects an unknown agent or sub-agent, and sub-agents with a command, before creating a session", async () => {
    const count = await sessionCount();
    await expect(h.conductor.delegate({ task: "x", agent: "nope" })).rejects.toThrow(/Unknown agent "nope"\. Available agents: .*build/);
    await expect(h.conductor.delegate({ task: "x", agents: ["general", "nobody"] })).rejects.toThrow(/Unknown agent "nobody"/);
    await expect(h.conductor.delegate({ command: "hello", task: "x", agents: ["general"] })).rejects.toThrow("`agents` cannot go with `command`");
    expect(await sessionCount()).toBe(count);
  });

  it("resolves a plain model name, and rejects an ambiguous one with its candidates", async () => {
    h.oc.model.for("alpha-1").queue(text("alpha one here"));
    const r = await h.conductor.delegate({ task: "who are you?", model: "alpha-1", detail: "summary" });
    expect(r).toMatchObject({ status: "done", answer: "alpha one here", model: "fake/alpha-1" });

    const count = await sessionCount();
    const requests = h.oc.model.requests.length;
    const error = await h.conductor.delegate({ task: "x", model: "alpha" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelResolutionError);
    expect((error as ModelResolutionError).candidates).toEqual(["fake/alpha-1", "fake/alpha-2"]);
    expect(await sessionCount()).toBe(count);
    expect(h.oc.model.requests.length).toBe(requests);
  });

  it("rejects a missing directory (or a file) before anything is created", async () => {
    const count = await sessionCount();
    await expect(h.conductor.delegate({ task: "x", directory: join(h.oc.root, "no-such-dir") })).rejects.toThrow(UsageError);
    await expect(h.conductor.delegate({ task: "x", directory: join(h.oc.directory, "hello.txt") })).rejects.toThrow(/is a file/);
    expect(await sessionCount()).toBe(count);
  });

  it("in a project without git, lists the files from the tool calls", async () => {
    const plain = await makeProjectDir(h.oc, "plain");
    const file = join(plain, "note.txt");
    h.oc.model.queue(toolCall("write", { filePath: file, content: "note\n" }), text("Noted."));
    const r = await h.conductor.delegate({ task: "write a note", directory: plain });
    expect(r).toMatchObject({ status: "done", answer: "Noted.", directory: plain, files: [{ path: "note.txt" }] });
    expect(readFileSync(file, "utf8")).toBe("note\n");
    const session = await h.conductor.client.call("session.get", { path: { sessionID: r.sessionId } });
    expect(session.directory).toBe(plain);
    await dumpMessages(h, "write-plain", r.sessionId);
  });

  it("readonly: write, edit and bash are not offered, so a write cannot happen", async () => {
    const file = join(h.oc.directory, "denied.txt");
    h.oc.model.queue(toolCall("write", { filePath: file, content: "no" }), text("Could not write."));
    const r = await h.conductor.delegate({ task: "try to write", permissions: "readonly" });
    expect(r).toMatchObject({ status: "done", answer: "Could not write." });
    expect(existsSync(file)).toBe(false);
    expect(r.tools?.some((t) => t.tool === "write" && t.status === "completed")).toBe(false);
    expect(r.files).toEqual([]);
    const offered = (h.oc.model.requestsFor(r.sessionId)[0]!.body.tools ?? []).map((t) => (t as { function: { name: string } }).function.name);
    expect(offered).toContain("read");
    for (const tool of ["write", "edit", "bash"]) expect(offered).not.toContain(tool);
  });
});
