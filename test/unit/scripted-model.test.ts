// The scripted model speaks the OpenAI chat-completions wire format; checked here with plain
// fetch so e2e failures can be told apart from scripting mistakes.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  SUMMARY_ANSWER,
  TITLE_ANSWER,
  delay,
  hang,
  httpError,
  midStreamError,
  reasoning,
  startScriptedModel,
  text,
  times,
  toolCall,
  toolCalls,
  type ScriptedModel,
} from "../support/scripted-model.js";

let model: ScriptedModel;
beforeEach(async () => {
  model = await startScriptedModel();
});
afterEach(async () => {
  await model.close();
});

interface Chunk {
  object?: string;
  choices: Array<{ index: number; delta: Record<string, any>; finish_reason: string | null }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  error?: { message: string; type: string; code: string };
}

function chat(body: Record<string, unknown> = {}, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}) {
  return fetch(`${model.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: JSON.stringify({
      model: "scripted",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
      ...body,
    }),
    signal: init.signal,
  });
}

/** The `data:` payloads of a finished SSE body, `[DONE]` kept as a string. */
async function dataLines(res: Response): Promise<Array<Chunk | "[DONE]">> {
  const raw = await res.text();
  return raw
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice(6))
    .map((data) => (data === "[DONE]" ? "[DONE]" : (JSON.parse(data) as Chunk)));
}

const chunksOf = (lines: Array<Chunk | "[DONE]">) => lines.filter((l): l is Chunk => l !== "[DONE]");
const contentOf = (lines: Array<Chunk | "[DONE]">) =>
  chunksOf(lines)
    .map((c) => c.choices?.[0]?.delta.content ?? "")
    .join("");

describe("scripted model", () => {
  it("streams text as chat.completion.chunk lines, then usage and [DONE]", async () => {
    model.queue(text("Hello from scripted.", { chunks: 3 }));
    const res = await chat();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const lines = await dataLines(res);
    expect(lines.at(-1)).toBe("[DONE]");
    const chunks = chunksOf(lines);
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBe(3);
    expect(contentOf(lines)).toBe("Hello from scripted.");
    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish?.choices[0]?.finish_reason).toBe("stop");
    const usage = chunks.at(-1);
    expect(usage?.choices).toEqual([]);
    expect(usage?.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(usage?.usage?.completion_tokens).toBeGreaterThan(0);
    expect(usage?.usage?.total_tokens).toBe(usage!.usage!.prompt_tokens + usage!.usage!.completion_tokens);
  });

  it("omits the usage chunk unless include_usage, and honours scripted usage", async () => {
    model.queue(text("a"), text("b", { usage: { prompt_tokens: 1000, completion_tokens: 7 } }));
    const plain = chunksOf(await dataLines(await chat({ stream_options: undefined })));
    expect(plain.some((c) => c.usage)).toBe(false);
    const scripted = chunksOf(await dataLines(await chat()));
    expect(scripted.at(-1)?.usage).toEqual({ prompt_tokens: 1000, completion_tokens: 7, total_tokens: 1007 });
  });

  it("streams reasoning_content before the answer", async () => {
    model.queue(reasoning("thinking hard", "42"));
    const chunks = chunksOf(await dataLines(await chat()));
    const reasoningAt = chunks.findIndex((c) => c.choices[0]?.delta.reasoning_content === "thinking hard");
    const answerAt = chunks.findIndex((c) => c.choices[0]?.delta.content === "42");
    expect(reasoningAt).toBeGreaterThan(-1);
    expect(answerAt).toBeGreaterThan(reasoningAt);
  });

  it("streams tool calls: id, type and name first with empty arguments, then argument fragments", async () => {
    model.queue(
      toolCall("write", { filePath: "/tmp/x.txt", content: "hello" }),
      toolCalls([
        { name: "bash", args: { command: "echo hi" } },
        { name: "read", args: { filePath: "/tmp/x.txt" }, id: "call_custom" },
      ]),
    );
    const first = chunksOf(await dataLines(await chat()));
    const deltas = first.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toEqual({ index: 0, id: expect.stringMatching(/^call_/), type: "function", function: { name: "write", arguments: "" } });
    expect(deltas.length).toBeGreaterThan(2); // arguments arrive in fragments
    const args = deltas.map((d: any) => d.function.arguments).join("");
    expect(JSON.parse(args)).toEqual({ filePath: "/tmp/x.txt", content: "hello" });
    expect(first.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe("tool_calls");

    const second = chunksOf(await dataLines(await chat()));
    const calls = second.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    const byIndex = (i: number) => calls.filter((d: any) => d.index === i);
    expect(byIndex(0)[0].function.name).toBe("bash");
    expect(byIndex(1)[0]).toMatchObject({ id: "call_custom", function: { name: "read" } });
    expect(
      JSON.parse(
        byIndex(1)
          .map((d: any) => d.function.arguments)
          .join(""),
      ),
    ).toEqual({ filePath: "/tmp/x.txt" });
    expect(model.requests.map((r) => r.step)).toEqual(["toolCall(write)", "toolCall(bash, read)"]);
  });

  it("answers 429 with retry-after-ms and an OpenAI error body, repeated with times()", async () => {
    model.queue(times(2, httpError(429, { retryAfterMs: 200 })), httpError(500, { retryAfter: 1, message: "boom" }));
    for (let i = 0; i < 2; i++) {
      const res = await chat();
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after-ms")).toBe("200");
      expect(await res.json()).toEqual({ error: { message: "Rate limit exceeded", type: "rate_limit_error", code: "rate_limit" } });
    }
    const res = await chat();
    expect(res.status).toBe(500);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(((await res.json()) as Chunk).error?.message).toBe("boom");
    expect(contentOf(await dataLines(await chat()))).toMatch(/no step queued/);
  });

  it("sends a mid-stream error chunk after partial text, without [DONE]", async () => {
    model.queue(midStreamError({ text: "Half", message: "stream broke" }));
    const lines = await dataLines(await chat());
    expect(contentOf(lines)).toBe("Half");
    expect(lines).not.toContain("[DONE]");
    expect(chunksOf(lines).at(-1)?.error?.message).toBe("stream broke");
  });

  it("ends the stream early without finish_reason or [DONE] in truncate mode", async () => {
    model.queue(midStreamError({ mode: "truncate", text: "Trunc" }));
    const lines = await dataLines(await chat());
    expect(contentOf(lines)).toBe("Trunc");
    expect(lines).not.toContain("[DONE]");
    expect(chunksOf(lines).some((c) => c.choices?.[0]?.finish_reason)).toBe(false);
  });

  it("cuts the connection mid-stream in reset mode", async () => {
    model.queue(midStreamError({ mode: "reset" }));
    const res = await chat();
    await expect(res.text()).rejects.toThrow();
  });

  it("hang: 200 and SSE headers, then nothing until the client aborts", async () => {
    model.queue(hang());
    const abort = new AbortController();
    const res = await chat({}, { signal: abort.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const [request] = await model.waitForRequests(1);
    expect(request!.endedAt).toBeUndefined();
    abort.abort();
    const ended = await model.waitForEnd(request!);
    expect(ended.clientClosed).toBe(true);
  });

  it("close() ends hung and delayed requests", async () => {
    model.queue(hang(), delay(60_000, text("never")));
    const hung = await chat();
    const delayed = chat().catch((error: unknown) => error);
    await model.waitForRequests(2);
    await model.close();
    await expect(hung.text()).rejects.toThrow();
    expect(await delayed).toBeInstanceOf(Error);
  });

  it("waits delayMs before answering", async () => {
    model.queue(delay(150, text("late")));
    const started = Date.now();
    const res = await chat();
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(contentOf(await dataLines(res))).toBe("late");
  });

  it("answers a clear default text when nothing is queued", async () => {
    const lines = await dataLines(await chat());
    expect(contentOf(lines)).toBe("(scripted model: no step queued for model scripted)");
    expect(model.lastRequest()?.step).toBe("default");
  });

  it("answers title requests without consuming a step", async () => {
    model.queue(text("real answer"));
    const title = await chat({
      messages: [
        { role: "system", content: "You are a title generator. You output ONLY a thread title." },
        { role: "user", content: "hi" },
      ],
    });
    expect(contentOf(await dataLines(title))).toBe(TITLE_ANSWER);
    expect(model.remaining()).toBe(1);
    expect(contentOf(await dataLines(await chat()))).toBe("real answer");
    expect(model.requests.map((r) => [r.kind, r.step])).toEqual([
      ["title", "title"],
      ["chat", 'text("real answer")'],
    ]);
  });

  it("lets summarization requests consume steps, with a summary when the queue is empty", async () => {
    const summarize = { messages: [{ role: "system", content: [{ type: "text", text: "You are a context summarization agent." }] }] };
    model.queue(text("scripted summary"));
    expect(contentOf(await dataLines(await chat(summarize)))).toBe("scripted summary");
    expect(contentOf(await dataLines(await chat(summarize)))).toBe(SUMMARY_ANSWER);
    expect(model.requests.map((r) => r.kind)).toEqual(["summary", "summary"]);
  });

  it("records requests; session queues win over model queues", async () => {
    model.queue(text("model queue"));
    model.for("backup").queue(text("backup queue"));
    model.forSession("ses_a").queue(text("session queue"));
    const waiting = model.waitForRequests(2, { sessionId: "ses_a" });

    const a1 = await dataLines(await chat({}, { headers: { "x-session-id": "ses_a" } }));
    const a2 = await dataLines(await chat({}, { headers: { "x-session-id": "ses_a" } }));
    const b = await dataLines(await chat({ model: "backup" }, { headers: { "x-session-id": "ses_b" } }));
    expect([contentOf(a1), contentOf(a2), contentOf(b)]).toEqual(["session queue", "model queue", "backup queue"]);

    const seen = await waiting;
    expect(seen.map((r) => r.step)).toEqual(['text("session queue")', 'text("model queue")']);
    expect(model.requestsFor("ses_b")).toHaveLength(1);
    const last = model.lastRequest();
    expect(last).toMatchObject({ index: 2, model: "backup", sessionId: "ses_b", kind: "chat", step: 'text("backup queue")' });
    expect(last?.body.messages?.[0]).toEqual({ role: "user", content: "hi" });
    expect(last?.headers["x-session-id"]).toBe("ses_b");
    expect(typeof last?.at).toBe("number");
    expect(model.leftovers()).toEqual({});
  });

  it("reports leftovers and times out waitForRequests with what it saw", async () => {
    model.queue(times(3, httpError(429)));
    await chat();
    expect(model.leftovers()).toEqual({ "model:scripted": ["httpError(429) x2"] });
    await expect(model.waitForRequests(5, { timeoutMs: 50 })).rejects.toThrow(/saw 1/);
  });

  it("answers stream:false with a chat.completion JSON", async () => {
    model.queue(text("plain"), toolCall("bash", { command: "ls" }));
    const res = await chat({ stream: false });
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ object: "chat.completion", choices: [{ message: { role: "assistant", content: "plain" }, finish_reason: "stop" }] });
    expect(body.usage.total_tokens).toBeGreaterThan(0);
    const tool = (await (await chat({ stream: false })).json()) as any;
    expect(tool.choices[0].finish_reason).toBe("tool_calls");
    expect(tool.choices[0].message.tool_calls[0]).toMatchObject({ type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } });
  });

  it("lists models", async () => {
    const res = await fetch(`${model.baseURL}/models`);
    const body = (await res.json()) as { data: Array<{ id: string }> };
    expect(body.data.map((m) => m.id)).toEqual(expect.arrayContaining(["scripted", "backup"]));
  });
});
