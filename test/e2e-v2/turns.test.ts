// Turns on a real opencode 2.x server, driven through the v2 route adapter: which events mark a
// turn's start and outcome, and what the server records. Facts: docs/opencode-2x-behaviour.md.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpError, text, toolCall } from "../support/scripted-model.js";
import { startV2Fixture, type V2Fixture } from "../support/opencode2.js";
import { isOutcome } from "../support/v2-events.js";

let v2: V2Fixture;
beforeAll(async () => {
  v2 = await startV2Fixture({ gitInit: true });
});
afterAll(() => v2?.stop());

async function turn(sessionID: string, prompt: string) {
  const from = v2.log.events.length;
  const admitted = (await v2.client.request("session.prompt", { path: { sessionID }, body: { text: prompt } })) as {
    data: { id: string; type: string; delivery: string };
  };
  const outcome = await v2.log.waitFor(isOutcome(sessionID), { after: from, what: `outcome of ${sessionID}` });
  // session.created and session.renamed (the title generator's answer) arrive at their own pace,
  // not in a fixed place among the turn's events.
  const sequence = v2.log.sequence(sessionID, from).filter((t) => t !== "session.created" && t !== "session.renamed");
  return { admitted: admitted.data, outcome, sequence };
}

describe("a text turn", () => {
  it("starts with session.execution.started and ends with session.execution.succeeded; the answer is recorded", async () => {
    const id = await v2.newSession("text");
    v2.server.model.forSession(id).queue(text("hello from the scripted model"));
    const { admitted, outcome, sequence } = await turn(id, "Say hello");

    expect(admitted).toMatchObject({ type: "user", delivery: "steer" }); // steer is the default delivery
    expect(outcome).toMatchObject({ type: "session.execution.succeeded", data: { sessionID: id } });
    expect(outcome.durable).toMatchObject({ aggregateID: id });
    expect(sequence).toEqual([
      "session.input.admitted",
      "session.execution.started",
      "session.input.promoted",
      "session.step.started",
      "session.text.started",
      "session.text.ended",
      "session.step.ended",
      "session.execution.succeeded",
    ]);

    const messages = await v2.messages(id);
    expect(messages.map((m) => m.type)).toEqual(["user", "assistant"]);
    expect(messages[0]).toMatchObject({ id: admitted.id, text: "Say hello" });
    expect(messages[1]).toMatchObject({ finish: "stop", content: [{ type: "text", text: "hello from the scripted model" }] });
    expect(await v2.client.request("session.active", {})).toEqual({ data: {} });
  });
});

describe("tool turns", () => {
  it("write (2.x arguments: `path`, not `filePath`) creates the file, and the step ends with finish tool-calls", async () => {
    const id = await v2.newSession("write");
    const file = join(v2.server.directory, "hello.txt");
    v2.server.model.forSession(id).queue(toolCall("write", { path: file, content: "hello\n" }), text("wrote it"));
    const { outcome, sequence } = await turn(id, "Write hello.txt");

    expect(outcome.type).toBe("session.execution.succeeded");
    expect(sequence).toEqual(expect.arrayContaining(["session.tool.called", "session.tool.success"]));
    expect(readFileSync(file, "utf8")).toBe("hello\n");
    const [, toolStep, final] = await v2.messages(id);
    expect(toolStep).toMatchObject({ finish: "tool-calls", content: [{ type: "tool", name: "write", state: { status: "completed", input: { path: file } } }] });
    expect(toolStep!.snapshot).toMatchObject({ files: ["hello.txt"] });
    expect(final).toMatchObject({ finish: "stop" });
  });

  it("the 1.x argument name (`filePath`) fails the tool, not the turn", async () => {
    const id = await v2.newSession("write-1x-args");
    v2.server.model.forSession(id).queue(toolCall("write", { filePath: join(v2.server.directory, "no.txt"), content: "x" }), text("gave up"));
    const { outcome, sequence } = await turn(id, "Write no.txt");
    expect(outcome.type).toBe("session.execution.succeeded");
    expect(sequence).toContain("session.tool.failed");
    expect(existsSync(join(v2.server.directory, "no.txt"))).toBe(false);
    const toolStep = (await v2.messages(id))[1]!;
    expect(toolStep.content?.[0]).toMatchObject({ type: "tool", name: "write", state: { status: "error" } });
  });

  it("shell (2.x's bash tool) runs the command and records its exit code", async () => {
    const id = await v2.newSession("shell");
    v2.server.model.forSession(id).queue(toolCall("shell", { command: "echo made-by-shell > shell.txt" }), text("ran it"));
    const { outcome, sequence } = await turn(id, "Run it");
    expect(outcome.type).toBe("session.execution.succeeded");
    expect(sequence).toEqual(expect.arrayContaining(["session.tool.called", "session.tool.progress", "session.tool.success"]));
    expect(readFileSync(join(v2.server.directory, "shell.txt"), "utf8")).toBe("made-by-shell\n");
    const toolStep = (await v2.messages(id))[1]!;
    expect(toolStep.content?.[0]).toMatchObject({ type: "tool", name: "shell", state: { status: "completed", metadata: { exit: 0 } } });
  });
});

describe("a failing model", () => {
  it("HTTP 400 fails the turn at once: session.execution.failed carries the error, the message records finish error", async () => {
    const id = await v2.newSession("http-400");
    v2.server.model.forSession(id).queue(httpError(400));
    const { outcome, sequence } = await turn(id, "x");
    expect(outcome).toMatchObject({
      type: "session.execution.failed",
      data: { sessionID: id, error: { type: "provider.invalid-request", status: 400, message: expect.stringContaining("HTTP 400") } },
    });
    expect(sequence.slice(-2)).toEqual(["session.step.failed", "session.execution.failed"]);
    expect(v2.server.model.requestsFor(id).filter((r) => r.kind === "chat")).toHaveLength(1); // no retry
    const assistant = (await v2.messages(id))[1]!;
    expect(assistant).toMatchObject({ finish: "error", error: { type: "provider.invalid-request", status: 400 }, content: [] });
  });

  it("429 and 500 are retried (session.retry.scheduled), then the turn succeeds in the same assistant message", async () => {
    const id = await v2.newSession("http-retry");
    v2.server.model.forSession(id).queue(httpError(429, { retryAfterMs: 100 }), httpError(500), text("recovered"));
    const { outcome, sequence } = await turn(id, "x");
    expect(outcome.type).toBe("session.execution.succeeded");
    const retries = v2.log.of(id).filter((e) => e.type === "session.retry.scheduled");
    expect(retries.map((e) => [e.data.attempt, (e.data.error as { type: string; status: number }).type, (e.data.error as { status: number }).status])).toEqual([
      [2, "provider.rate-limit", 429],
      [3, "provider.internal", 500],
    ]);
    expect(sequence).not.toContain("session.step.failed");
    const messages = await v2.messages(id);
    expect(messages.map((m) => m.type)).toEqual(["user", "assistant"]);
    expect(messages[1]).toMatchObject({ finish: "stop", content: [{ type: "text", text: "recovered" }] });
    expect(messages[1]!.error).toBeUndefined();
  });
});
