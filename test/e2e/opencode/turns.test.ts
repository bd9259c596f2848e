// opencode itself, driven through our client: text and tool turns, a question, and 12 sessions at
// once, each asserting a real effect (a file on disk, what reached the model, the stored answer).
// One server for the file; each test uses its own sessions and per-session model scripts.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useClient } from "../../support/conductor.js";
import type { Schemas } from "../../../src/client/types.js";
import { text, toolCall } from "../../support/scripted-model.js";
import { createSession, lastAssistant, prompt, promptAndWait, readMessages, watchSession, type SessionMessages } from "../../support/turns.js";
import { COLOR_QUESTION } from "../../support/questions.js";

const h = useClient();

function toolParts(messages: SessionMessages): Schemas["ToolPart"][] {
  return messages.flatMap((m) => m.parts.filter((p): p is Schemas["ToolPart"] => p.type === "tool"));
}

/** The `role:"tool"` messages opencode sent in a recorded model request. */
function toolResults(body: { messages?: Array<{ role: string; content?: unknown }> }): string[] {
  return (body.messages ?? []).filter((m) => m.role === "tool").map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

describe("opencode turns through the client", () => {
  it("answers a text turn: session.idle, then the answer is in session.messages", async () => {
    const session = await createSession(h.client, "text turn");
    h.server.model.forSession(session.id).queue(text("Hello from scripted."));

    const turn = await promptAndWait(h.client, session.id, "say hello");

    const types = turn.events.map((e) => e.type);
    expect(types).toContain("session.status");
    expect(types.at(-1)).toBe("session.idle");
    expect(turn.answer).toBe("Hello from scripted.");
    const assistant = lastAssistant(turn.messages)!.info as Schemas["AssistantMessage"];
    expect(assistant).toMatchObject({ role: "assistant", finish: "stop", providerID: "fake", modelID: "scripted" });
    expect(assistant.error).toBeUndefined();
    // One model request (a title was given, so no title request), carrying the user's text.
    const requests = h.server.model.requestsFor(session.id);
    expect(requests.map((r) => r.kind)).toEqual(["chat"]);
    expect(JSON.stringify(requests[0]!.body.messages)).toContain("say hello");
  });

  it("runs a write tool call: the file exists on disk with the content", async () => {
    const session = await createSession(h.client, "write tool");
    const filePath = join(h.server.directory, "hello.txt");
    h.server.model.forSession(session.id).queue(toolCall("write", { filePath, content: "written by the scripted model\n" }), text("done"));

    const turn = await promptAndWait(h.client, session.id, "write hello.txt");

    expect(await readFile(filePath, "utf8")).toBe("written by the scripted model\n");
    expect(turn.answer).toBe("done");
    const [part] = toolParts(turn.messages);
    expect(part).toMatchObject({ tool: "write", state: { status: "completed", output: "Wrote file successfully." } });
    // Each model call is its own assistant message: the tool step, then the final text.
    const finishes = turn.messages.filter((m) => m.info.role === "assistant").map((m) => (m.info as Schemas["AssistantMessage"]).finish);
    expect(finishes).toEqual(["tool-calls", "stop"]);
    expect(toolResults(h.server.model.requestsFor(session.id)[1]!.body)).toEqual(["Wrote file successfully."]);
  });

  it("runs a bash tool call: its output reaches the model's next request", async () => {
    const session = await createSession(h.client, "bash tool");
    h.server.model.forSession(session.id).queue(toolCall("bash", { command: "echo hello-from-bash", description: "say hello" }), text("done"));

    const turn = await promptAndWait(h.client, session.id, "run echo");

    const requests = h.server.model.requestsFor(session.id);
    expect(requests).toHaveLength(2);
    const results = toolResults(requests[1]!.body);
    expect(results).toHaveLength(1);
    expect(results[0]).toContain("hello-from-bash");
    const [part] = toolParts(turn.messages);
    expect(part).toMatchObject({ tool: "bash", state: { status: "completed", metadata: { exit: 0 } } });
  });

  it("asks a question: question.list shows it, question.reply answers it, the answer reaches the model", async () => {
    const session = await createSession(h.client, "question");
    const questions = [COLOR_QUESTION];
    h.server.model.forSession(session.id).queue(toolCall("question", { questions }), text("Blue it is."));

    const watch = await watchSession(h.client, session.id);
    try {
      await prompt(h.client, session.id, "pick a color");
      const asked = await watch.waitFor("question.asked", (e) => e.type === "question.asked");
      if (asked.type !== "question.asked") throw new Error("unreachable");
      expect(asked.properties.questions).toEqual(questions);

      const listed = await h.client.call("question.list");
      expect(listed.filter((q) => q.sessionID === session.id).map((q) => q.id)).toEqual([asked.properties.id]);

      expect(await h.client.call("question.reply", { path: { requestID: asked.properties.id }, body: { answers: [["Blue"]] } })).toBe(true);
      await watch.idle();
      expect(watch.events.map((e) => e.type)).toContain("question.replied");
    } finally {
      watch.close();
    }

    const requests = h.server.model.requestsFor(session.id);
    expect(requests).toHaveLength(2);
    expect(toolResults(requests[1]!.body).join("\n")).toContain('"Which color?"="Blue"');
    expect((await h.client.call("question.list")).filter((q) => q.sessionID === session.id)).toEqual([]);
    const messages = await readMessages(h.client, session.id);
    expect(toolParts(messages)[0]).toMatchObject({ tool: "question", state: { status: "completed" } });
  });

  it("finishes 12 sessions prompted at once, each with its own answer", async () => {
    const sessions = await Promise.all(Array.from({ length: 12 }, (_, i) => createSession(h.client, `parallel ${i}`)));
    sessions.forEach((s, i) => h.server.model.forSession(s.id).queue(text(`ok-${i}`, { delayMs: 300 })));

    const turns = await Promise.all(sessions.map((s) => promptAndWait(h.client, s.id, "answer ok")));

    expect(turns.map((t) => t.answer)).toEqual(sessions.map((_, i) => `ok-${i}`));
    const requests = sessions.map((s) => h.server.model.requestsFor(s.id));
    expect(requests.map((r) => r.length)).toEqual(sessions.map(() => 1));
    // Sessions run in parallel (docs/opencode-behaviour.md §8): some request arrived while another was still answering.
    const spans = requests.map(([r]) => ({ at: r!.at, end: r!.endedAt! }));
    const overlapping = spans.some((a) => spans.some((b) => a !== b && b.at >= a.at && b.at < a.end));
    expect(overlapping).toBe(true);
  });
});
