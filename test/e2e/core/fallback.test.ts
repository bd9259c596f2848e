// The model fallback watchdog against the real opencode (docs/opencode-behaviour.md §6): a model stuck in retry, or a
// turn ending in a provider error, makes the task go on in the SAME session with the next model.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../../src/core/conductor.js";
import { CONTINUE_TEXT } from "../../../src/core/turns/fallback-policy.js";
import { startMcp, type McpSession } from "../../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { httpError, text, times, toolCall } from "../../support/scripted-model.js";

let oc: TestOpencode;
let conductor: Conductor;

beforeAll(async () => {
  oc = await startOpencode();
  conductor = new Conductor({ url: oc.url, password: oc.password, directory: oc.directory });
});
afterAll(async () => {
  conductor?.close();
  await oc?.stop();
});
afterEach(() => {
  // A test that switched early leaves steps of the failing model unused.
  oc.model.for("scripted").clear();
  oc.model.for("backup").clear();
});

/** What the model received as user messages in its last request for the session (system text aside). */
function userTexts(sessionId: string, model: string): string[] {
  const request = oc.model.lastRequest({ sessionId, model, kind: "chat" });
  return (request?.body.messages ?? []).filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
}

const chats = (sessionId: string, model: string) => oc.model.requestsFor(sessionId).filter((r) => r.model === model && r.kind === "chat");

describe("model fallback (e2e)", () => {
  it("a model stuck in retry past the retry timeout is replaced by the next; the same session finishes, history intact", async () => {
    const settings = new Conductor({ url: oc.url, password: oc.password, directory: oc.directory, fallbackModels: ["fake/backup"], retryTimeoutS: 1 });
    try {
      oc.model.for("scripted").queue(times(6, httpError(429, { retryAfterMs: 300 })));
      oc.model.for("backup").queue(text("backup finished"));
      const progress: string[] = [];
      const r = await settings.delegate({ task: "Summarise the README", model: "fake/scripted", timeoutMs: 60_000, onProgress: (p) => progress.push(p.kind) });

      expect(r).toMatchObject({ status: "done", answer: "backup finished", model: "fake/backup" });
      expect(r.fallbacks).toEqual([
        {
          from: "fake/scripted",
          to: "fake/backup",
          reason: expect.stringMatching(/^still retrying after 1(\.\d)? s \(retry \d: Rate limit exceeded\)$/),
          at: expect.any(String),
        },
      ]);
      // Switched before opencode used up its 5 retries.
      expect(chats(r.sessionId, "scripted").length).toBeLessThan(6);
      // The same session, with the task once: the failed attempt was removed and the task re-sent.
      expect(userTexts(r.sessionId, "backup")).toEqual([expect.stringContaining("Summarise the README")]);
      expect(progress).toContain("fallback");
    } finally {
      settings.close();
    }
  });

  it("a 400 falls back at once; an earlier turn of the session stays in the history", async () => {
    oc.model.queue(text("first answer"));
    const first = await conductor.delegate({ task: "First task", model: "fake/scripted", timeoutMs: 60_000 });
    expect(first.status).toBe("done");

    oc.model.for("scripted").queue(httpError(400));
    oc.model.for("backup").queue(text("second answer from backup"));
    const r = await conductor.delegate({
      task: "Second task",
      sessionId: first.sessionId,
      model: "fake/scripted",
      fallbackModels: ["fake/backup"],
      timeoutMs: 60_000,
    });

    expect(r).toMatchObject({ sessionId: first.sessionId, status: "done", answer: "second answer from backup", model: "fake/backup" });
    expect(r.fallbacks).toEqual([{ from: "fake/scripted", to: "fake/backup", reason: "APIError 400: Bad request", at: expect.any(String) }]);
    expect(chats(r.sessionId, "scripted")).toHaveLength(2); // the first turn, and one 400: no retries
    expect(userTexts(r.sessionId, "backup")).toEqual([expect.stringContaining("First task"), expect.stringContaining("Second task")]);
  });

  it("429s whose retries run out in under a second fall back on the recorded error, in the same session", async () => {
    oc.model.for("scripted").queue(times(6, httpError(429, { retryAfterMs: 50 })));
    oc.model.for("backup").queue(text("backup took over"));
    const r = await conductor.delegate({ task: "Fast failing task", model: "fake/scripted", fallbackModels: ["fake/backup"], timeoutMs: 60_000 });

    expect(r).toMatchObject({ status: "done", answer: "backup took over", model: "fake/backup" });
    expect(r.fallbacks).toEqual([{ from: "fake/scripted", to: "fake/backup", reason: "APIError 429: Rate limit exceeded", at: expect.any(String) }]);
    expect(chats(r.sessionId, "scripted")).toHaveLength(6); // opencode's own retries ran out first
    // What opencode recorded: the backup's reply, in the task's session, with the task once.
    const messages = await conductor.client.call("session.messages", { path: { sessionID: r.sessionId } });
    const last = messages.at(-1)!.info;
    expect(last.role === "assistant" && last.modelID === "backup" && last.time.completed !== undefined && !last.error).toBe(true);
    expect(userTexts(r.sessionId, "backup")).toEqual([expect.stringContaining("Fast failing task")]);
  });

  it("a follow-up sent with send() falls back too: wait() finds it finished by the next model", async () => {
    oc.model.queue(text("first answer"));
    const first = await conductor.delegate({ task: "First task", model: "fake/scripted", timeoutMs: 60_000 });
    expect(first.status).toBe("done");

    oc.model.for("scripted").queue(httpError(400));
    oc.model.for("backup").queue(text("follow-up answered by backup"));
    const sent = await conductor.send(first.sessionId, "Now the follow-up", { model: "fake/scripted", fallbackModels: ["fake/backup"] });
    expect(sent.status).toBe("running");
    const r = await conductor.wait(first.sessionId, { timeoutMs: 60_000 });

    expect(r).toMatchObject({ status: "done", answer: "follow-up answered by backup", model: "fake/backup" });
    expect(r.fallbacks).toEqual([{ from: "fake/scripted", to: "fake/backup", reason: "APIError 400: Bad request", at: expect.any(String) }]);
    expect(userTexts(r.sessionId, "backup")).toEqual([expect.stringContaining("First task"), expect.stringContaining("Now the follow-up")]);
  });

  it("a failure after the agent did work keeps that work; the next model is asked to continue", async () => {
    const file = join(oc.directory, "half.txt");
    oc.model.for("scripted").queue(toolCall("write", { filePath: file, content: "half done\n" }), httpError(400));
    oc.model.for("backup").queue(text("finished the rest"));
    const r = await conductor.delegate({
      task: "Write half.txt then finish",
      model: "fake/scripted",
      fallbackModels: ["fake/backup"],
      permissions: "auto",
      timeoutMs: 60_000,
    });

    expect(r).toMatchObject({
      status: "done",
      answer: "finished the rest",
      model: "fake/backup",
      fallbacks: [{ from: "fake/scripted", to: "fake/backup", reason: "APIError 400: Bad request" }],
    });
    expect(existsSync(file)).toBe(true);
    const messages = oc.model.lastRequest({ sessionId: r.sessionId, model: "backup" })!.body.messages!;
    expect(messages.some((m) => m.role === "tool")).toBe(true); // the write is in the history
    expect(userTexts(r.sessionId, "backup")).toEqual([expect.stringContaining("Write half.txt then finish"), expect.stringContaining(CONTINUE_TEXT)]);
  });

  it("an exhausted list ends as error listing every model and reason", async () => {
    oc.model.for("scripted").queue(httpError(400));
    oc.model.for("backup").queue(httpError(400, { message: "Backup is broken too" }));
    const r = await conductor.delegate({ task: "Doomed", model: "fake/scripted", fallbackModels: ["fake/backup"], timeoutMs: 60_000 });

    expect(r.status).toBe("error");
    expect(r.error).toEqual({
      name: "AllModelsFailed",
      message: "All 2 models failed: fake/scripted: APIError 400: Bad request; fake/backup: APIError 400: Backup is broken too",
    });
    expect(r.fallbacks).toHaveLength(1);
    // A later read of the session reports the same.
    expect((await conductor.result(r.sessionId)).last).toMatchObject({
      status: "error",
      error: { name: "AllModelsFailed" },
      fallbacks: [{ to: "fake/backup" }],
    });
  });

  it("falls back with nobody waiting (wait: false); wait() and result() report the switch", async () => {
    oc.model.for("scripted").queue(httpError(400));
    oc.model.for("backup").queue(text("done in the background", { delayMs: 300 }));
    const started = await conductor.delegate({ task: "Background task", model: "fake/scripted", fallbackModels: ["fake/backup"], wait: false });
    expect(started.status).toBe("running");

    const done = await conductor.wait(started.sessionId, { timeoutMs: 60_000 });
    expect(done).toMatchObject({
      status: "done",
      answer: "done in the background",
      fallbacks: [{ from: "fake/scripted", to: "fake/backup", reason: "APIError 400: Bad request" }],
    });
    expect((await conductor.result(started.sessionId)).last.fallbacks).toEqual(done.fallbacks);

    // A later turn on the session is not the watched task: it carries no fallbacks.
    oc.model.for("backup").queue(text("next turn"));
    const next = await conductor.delegate({ task: "Another", sessionId: started.sessionId, model: "fake/backup", timeoutMs: 60_000 });
    expect(next).toMatchObject({ status: "done", answer: "next turn" });
    expect(next.fallbacks).toBeUndefined();
  });

  describe("through MCP (stdio)", () => {
    let mcp: McpSession;
    beforeAll(async () => {
      mcp = await startMcp({
        OPENCODE_URL: oc.url,
        OPENCODE_PASSWORD: oc.password,
        OPENCODE_CONDUCTOR_DIRECTORY: oc.directory,
        OPENCODE_CONDUCTOR_AUDIT: "off",
      });
    });
    afterAll(async () => {
      await mcp?.close();
    });

    it("oc_delegate with fallback_models switches; oc_wait and oc_result show the fallbacks", async () => {
      oc.model.for("scripted").queue(httpError(400));
      oc.model.for("backup").queue(text("backup via MCP", { delayMs: 300 }));
      const started = await mcp.call("oc_delegate", { task: "Task over MCP", model: "fake/scripted", fallback_models: ["fake/backup"], wait: false });
      expect(started.isError, started.text).toBe(false);

      const done = await mcp.call("oc_wait", { session_id: started.data.session_id });
      expect(done.data).toMatchObject({
        status: "done",
        answer: "backup via MCP",
        fallbacks: [{ from: "fake/scripted", to: "fake/backup", reason: "APIError 400: Bad request", at: expect.any(String) }],
      });
      expect(done.text).toContain("Model fallback: fake/scripted → fake/backup (APIError 400: Bad request)");

      const state = await mcp.call("oc_result", { session_id: started.data.session_id });
      expect(state.data).toMatchObject({ state: "idle", status: "done", fallbacks: [{ to: "fake/backup" }] });
    });

    it("an unknown fallback model is refused up front", async () => {
      const r = await mcp.call("oc_delegate", { task: "x", model: "fake/scripted", fallback_models: ["fake/nope"] });
      expect(r.isError).toBe(true);
      expect(r.text).toContain("nope");
    });
  });
});
