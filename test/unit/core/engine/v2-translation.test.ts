// The v2 engine's translations, on streams and messages recorded from the real opencode 2.x server
// (`npm run record -- --v2`), never hand-made ones: what a 2.x event means for a followed turn
// (engine/v2/v2-signals.ts: tool progress and the file a write named, the permission request or
// question form that blocks it, its answer, a step's usage for budgets), and 2.x messages in the
// core's shape (engine/v2/v2-messages.ts), from which the summary reads the answer, tools, files and
// outcome that the server recorded.
import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import type { WatchSignal } from "../../../../src/core/engine/engine.js";
import { recordedMessagesV2 } from "../../../../src/core/engine/v2/v2-events.js";
import { messagesFromV2 } from "../../../../src/core/engine/v2/v2-messages.js";
import { V2Signals, V2Usage } from "../../../../src/core/engine/v2/v2-signals.js";
import { summarizeTurn } from "../../../../src/core/turns/summary.js";
import { loadV2Session, type V2ScenarioName } from "../../../support/fixture.js";

const recorded = loadV2Session;

function signals(name: V2ScenarioName): WatchSignal[] {
  const r = recorded(name);
  const translator = new V2Signals(r.sessionId, r.directory);
  const followed = new Set([r.sessionId]);
  return r.events.flatMap((event) => translator.translate({ type: "v2.event", properties: event }, followed));
}

describe("V2Signals on recorded 2.x streams", () => {
  it("write-turn: the write tool runs and completes, naming the file it wrote (2.x `path`); the outcome ends the turn", () => {
    const s = signals("write-turn");
    const tools = s.filter((x) => x.kind === "tool");
    expect(tools).toEqual([
      expect.objectContaining({ tool: "write", status: "running" }),
      expect.objectContaining({ tool: "write", status: "completed", file: expect.any(String) }),
    ]);
    expect(s.some((x) => x.kind === "busy")).toBe(true);
    expect(s.filter((x) => x.kind === "turn" && x.event.type === "outcome").map((x) => (x as { event: { outcome: string } }).event.outcome)).toEqual([
      "succeeded",
    ]);
  });

  it("permission: the request blocks (action, resources, save), then its reply clears it", () => {
    const s = signals("permission");
    const request = s.find((x) => x.kind === "request");
    expect(request).toMatchObject({
      kind: "request",
      request: { kind: "permission", id: expect.stringMatching(/^per_/), permission: "shell", patterns: [expect.any(String)], always: expect.any(Array) },
    });
    const id = (request as { request: { id: string } }).request.id;
    expect(s.findIndex((x) => x.kind === "request-answered" && x.id === id)).toBeGreaterThan(s.indexOf(request!));
  });

  it("question: the form is shown as a question with its options, then its reply clears it", () => {
    const s = signals("question");
    const request = s.find((x) => x.kind === "request") as { request: { kind: string; id: string; questions: Array<{ options: unknown[] }> } } | undefined;
    expect(request?.request).toMatchObject({ kind: "question", id: expect.stringMatching(/^frm_/) });
    expect(request!.request.questions[0]!.options.length).toBeGreaterThan(0);
    expect(s.some((x) => x.kind === "request-answered" && x.id === request!.request.id)).toBe(true);
  });

  it("http-400: no retry is signalled, the outcome is failed with the provider's error", () => {
    const s = signals("http-400");
    expect(s.some((x) => x.kind === "retry")).toBe(false);
    expect(s.find((x) => x.kind === "turn" && x.event.type === "outcome")).toMatchObject({
      event: { outcome: "failed", error: { name: "provider.invalid-request", statusCode: 400 } },
    });
  });

  it("subagent-notice: a background sub-agent's notice, promoted into the parent, is the prompt the step after it counts for", () => {
    const r = recorded("subagent-notice");
    const usage = new V2Usage();
    const counted = r.events
      .flatMap((e) => usage.translate({ type: "v2.event", properties: e }))
      .filter((u) => u.kind === "usage" && u.sessionId === r.sessionId);
    const notice = r.final.find((m) => m.type === "synthetic")!;
    expect(counted.at(-1)).toMatchObject({ messageId: r.final.at(-1)!.id, parentId: notice.id });
  });

  it("usage: each step's tokens count once, for the prompt promoted before it", () => {
    const r = recorded("write-turn");
    const usage = new V2Usage();
    const counted = r.events.flatMap((e) => usage.translate({ type: "v2.event", properties: e })).filter((u) => u.kind === "usage");
    const steps = r.final.filter((m) => m.type === "assistant");
    expect(counted.map((u) => (u as { messageId: string }).messageId)).toEqual(steps.map((m) => m.id));
    const user = r.final.find((m) => m.type === "user")!;
    for (const u of counted) expect(u).toMatchObject({ sessionId: r.sessionId, parentId: user.id, tokens: expect.any(Number) });
    expect((counted[0] as { tokens: number }).tokens).toBeGreaterThan(0);
  });
});

describe("2.x messages in the core's shape", () => {
  it("write-turn: the summary reads the answer, the write tool and its file, done", () => {
    const r = recorded("write-turn");
    const messages = messagesFromV2(r.final, r.sessionId, r.directory);
    const summary = summarizeTurn({ sessionId: r.sessionId, messages, outcome: "idle" });
    const lastText = r.final
      .filter((m) => m.type === "assistant")
      .flatMap((m) => m.content ?? [])
      .filter((c) => c.type === "text")
      .at(-1)?.text;
    expect(summary).toMatchObject({
      status: "done",
      answer: lastText,
      tools: [{ tool: "write", status: "completed" }],
      model: "fake/scripted",
      agent: "build",
    });
    // The file the write tool named (this recording's project has no git, so no step snapshot lists it).
    const written = r.final.flatMap((m) => m.content ?? []).flatMap((c) => (c.type === "tool" && c.name === "write" ? [String(c.state?.input?.path)] : []));
    expect(written).toHaveLength(1);
    // Shown relative to the session's directory, as on 1.x.
    expect(summary.files?.map((f) => f.path)).toEqual(written.map((p) => relative(r.directory, p)));
    expect(summary.messageId).toBe(r.final.find((m) => m.type === "user")!.id);
  });

  it("http-400: the recorded provider error is the summary's error (name, status)", () => {
    const r = recorded("http-400");
    const summary = summarizeTurn({ sessionId: r.sessionId, messages: messagesFromV2(r.final, r.sessionId, r.directory), outcome: "idle" });
    expect(summary).toMatchObject({ status: "error", error: { name: "provider.invalid-request", statusCode: 400 } });
  });

  it("interrupt: the step the interrupt stopped reads as interrupted (aborted), with its partial text", () => {
    const r = recorded("interrupt");
    const summary = summarizeTurn({ sessionId: r.sessionId, messages: messagesFromV2(r.final, r.sessionId, r.directory), outcome: "idle" });
    expect(summary).toMatchObject({ status: "interrupted", error: { name: "aborted" } });
    expect(summary.answer.length).toBeGreaterThan(0);
  });

  it("steer: the steered prompt is the last turn's user message, its answer the last step's", () => {
    const r = recorded("steer");
    const messages = messagesFromV2(r.final, r.sessionId, r.directory);
    const users = r.final.filter((m) => m.type === "user");
    const summary = summarizeTurn({ sessionId: r.sessionId, messages, outcome: "idle" });
    expect(summary.messageId).toBe(users.at(-1)!.id);
    expect(summary.status).toBe("done");
  });

  it("subagent-notice: opencode's notice that a background sub-agent ended is a prompt of its own, which the step after it answers", () => {
    const r = recorded("subagent-notice");
    const notice = r.final.find((m) => m.type === "synthetic")!;
    expect(notice.metadata).toMatchObject({ source: "subagent", state: "completed" });
    const messages = messagesFromV2(r.final, r.sessionId, r.directory);
    // A user message holding opencode's text, marked as 1.x marks the text it writes into a prompt.
    expect(messages.find((m) => m.info.id === notice.id)).toMatchObject({
      info: { role: "user" },
      parts: [{ type: "text", text: notice.text, synthetic: true }],
    });
    const last = r.final.at(-1)!;
    expect(messages.at(-1)!.info).toMatchObject({ id: last.id, parentID: notice.id });
    expect(recordedMessagesV2(r.final).at(-1)).toMatchObject({ id: last.id, parentId: notice.id });
    const summary = summarizeTurn({ sessionId: r.sessionId, messages, outcome: "idle" });
    const lastText = (last.content ?? []).flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
    expect(summary).toMatchObject({ status: "done", answer: lastText, messageId: notice.id, tools: [] });
  });

  it("subagent-notice: synthetic text without the sub-agent's mark (the instructions opencode loads mid-step) is no prompt", () => {
    const r = recorded("subagent-notice");
    const edited = r.final.map((m) => (m.type === "synthetic" ? { ...m, metadata: { instruction: { paths: ["/project/AGENTS.md"] } } } : m));
    const messages = messagesFromV2(edited, r.sessionId, r.directory);
    const prompt = r.final.find((m) => m.type === "user")!;
    expect(messages.filter((m) => m.info.role === "user").map((m) => m.info.id)).toEqual([prompt.id]);
    expect(summarizeTurn({ sessionId: r.sessionId, messages, outcome: "idle" }).messageId).toBe(prompt.id);
  });
});
