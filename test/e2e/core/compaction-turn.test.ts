// A turn that outgrows the model's context on opencode 1.x: after a step that used most of it,
// opencode compacts the session by itself in the middle of the turn (a user message with an `auto`
// compaction part, the compaction's summary, then a synthetic "Continue if you have next steps"
// user message) and the agent carries on in reply to that message. The turn is one turn: it ends
// when the carried-on reply ends, with that reply's answer, as opencode records it. Before, the turn
// machine took the compaction for a later prompt and called the turn `interrupted` at the tool call.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Conductor } from "../../../src/core/conductor.js";
import type { Message } from "../../../src/core/model/message.js";
import { useConductor } from "../../support/conductor.js";
import { text, toolCall } from "../../support/scripted-model.js";

// A small context window, so one step's usage sets off opencode's own compaction.
const h = useConductor({ config: { provider: { fake: { models: { scripted: { name: "Scripted", limit: { context: 16_000, output: 1_000 } } } } } } });

const isCompactionMarker = (m: Message) => m.info.role === "user" && m.parts.some((p) => p.type === "compaction" && p.auto);
const isContinue = (m: Message) =>
  m.info.role === "user" && m.parts.some((p) => p.type === "text" && p.synthetic === true && p.metadata?.compaction_continue === true);
const textOf = (m: Message) =>
  m.parts
    .flatMap((p) => (p.type === "text" ? [p.text] : []))
    .join("")
    .trim();

describe("a turn opencode 1.x compacts by itself", () => {
  it("ends with the reply after the compaction, as opencode recorded it, whoever reads it", async () => {
    // The tool step reports 15,500 prompt tokens of 16,000: opencode compacts, then continues.
    h.oc.model.queue(
      toolCall("bash", { command: "echo compacted", description: "say it" }, { usage: { prompt_tokens: 15_500, completion_tokens: 20 } }),
      text("Summary of the work so far."),
      text("All done after the compaction."),
    );
    const result = await h.conductor.delegate({ task: "Say it in the shell, then report", timeoutMs: 120_000 });

    // opencode's record (re-read): the prompt, the tool step, the compaction, and the reply that carried on.
    const messages = await h.conductor.engine.messages(result.sessionId);
    const prompt = messages[0]!;
    const marker = messages.findIndex(isCompactionMarker);
    const carried = messages.findIndex(isContinue);
    expect(marker, "opencode compacted the session during the turn").toBeGreaterThan(0);
    expect(carried).toBeGreaterThan(marker);
    expect(messages.filter((m) => m.info.role === "user" && !isCompactionMarker(m) && !isContinue(m)).map((m) => m.info.id)).toEqual([prompt.info.id]);
    const last = messages.at(-1)!;
    expect(last.info.role === "assistant" && last.info.parentID).toBe(messages[carried]!.info.id);
    expect(last.info.role === "assistant" && last.info.finish).toBe("stop");
    const spent = messages.reduce((sum, m) => sum + (m.info.role === "assistant" ? (m.info.tokens.total ?? 0) : 0), 0);

    expect(result).toMatchObject({ status: "done", answer: textOf(last), messageId: prompt.info.id });
    expect(result.answer).toBe("All done after the compaction.");
    expect(result.tools).toEqual([{ tool: "bash", status: "completed", title: "echo compacted" }]);
    expect(result.tokens?.total).toBe(spent);

    // Read from the server by a conductor that did not follow the turn: the same turn.
    const reader = new Conductor({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory, stateDir: join(h.oc.root, "reader-state") });
    try {
      const state = await reader.result(result.sessionId);
      expect(state.state).toBe("idle");
      expect([state.last.status, state.last.answer, state.last.messageId, state.last.tokens?.total]).toEqual(["done", textOf(last), prompt.info.id, spent]);
    } finally {
      reader.close();
    }
  });
});
