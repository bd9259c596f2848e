// Turns one step into an HTTP answer in the OpenAI chat-completions wire format, the way
// `@ai-sdk/openai-compatible` (opencode's provider) parses it: `data: <chunk>` lines, a usage
// chunk with `choices: []` when `stream_options.include_usage`, then `data: [DONE]`.
import type { ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { Step, ToolCallSpec, Usage } from "./steps.js";

export interface ReplyContext {
  /** Model id echoed in chunks. */
  model: string;
  stream: boolean;
  includeUsage: boolean;
  /** Estimated prompt size, used when the step does not set usage. */
  promptTokens: number;
  /** `chatcmpl-…` id shared by all chunks of this answer. */
  id: string;
  /** Unique number used to build default tool call ids. */
  seq: number;
  /** Aborted when the client closes the connection or the server shuts down. */
  signal: AbortSignal;
}

export async function reply(step: Step, res: ServerResponse, ctx: ReplyContext): Promise<void> {
  if (step.delayMs && !(await pause(step.delayMs, ctx.signal))) return;
  if (step.until && !(await settled(step.until, ctx.signal))) return;
  if (step.kind === "http_error") return sendHttpError(step, res);
  return ctx.stream ? stream(step, res, ctx) : respondJson(step, res, ctx);
}

async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false; // client gone: nobody to answer
  }
}

/** True once `gate` settles, false when the client goes away first. */
async function settled(gate: Promise<unknown>, signal: AbortSignal): Promise<boolean> {
  const gone = untilAborted(signal).then(() => false);
  return Promise.race([
    gate.then(
      () => !signal.aborted,
      () => !signal.aborted,
    ),
    gone,
  ]);
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

function sendHttpError(step: Extract<Step, { kind: "http_error" }>, res: ServerResponse): void {
  const body = JSON.stringify({ error: { message: step.message, type: step.type, code: step.code } });
  res.writeHead(step.status, { "content-type": "application/json", ...step.headers });
  res.end(body);
}

function toolCallId(ctx: ReplyContext, call: ToolCallSpec, index: number): string {
  return call.id ?? `call_${ctx.seq}_${index}`;
}

function argumentsOf(call: ToolCallSpec): string {
  return typeof call.args === "string" ? call.args : JSON.stringify(call.args);
}

/** Split into `n` non-empty pieces (fewer if the string is short). */
export function split(s: string, n: number): string[] {
  if (n <= 1 || s.length <= 1) return [s];
  const size = Math.ceil(s.length / Math.min(n, s.length));
  const pieces: string[] = [];
  for (let i = 0; i < s.length; i += size) pieces.push(s.slice(i, i + size));
  return pieces;
}

function usageFor(step: Step, ctx: ReplyContext, outputChars: number): Usage {
  const prompt = step.usage?.prompt_tokens ?? ctx.promptTokens;
  const completion = step.usage?.completion_tokens ?? Math.max(1, Math.ceil(outputChars / 4));
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: step.usage?.total_tokens ?? prompt + completion };
}

function outputChars(step: Step): number {
  switch (step.kind) {
    case "text":
      return step.text.length + (step.reasoning?.length ?? 0);
    case "tool_calls":
      return (step.text?.length ?? 0) + step.calls.reduce((n, c) => n + c.name.length + argumentsOf(c).length, 0);
    default:
      return "text" in step && step.text ? step.text.length : 0;
  }
}

async function stream(step: Exclude<Step, { kind: "http_error" }>, res: ServerResponse, ctx: ReplyContext): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
  const created = Math.floor(Date.now() / 1000);
  const send = (payload: unknown) => {
    if (!res.destroyed) res.write(`data: ${JSON.stringify(payload)}\n\n`);
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    send({ id: ctx.id, object: "chat.completion.chunk", created, model: ctx.model, choices: [{ index: 0, delta, finish_reason: finish }] });
  const gap = async () => !("chunkDelayMs" in step && step.chunkDelayMs) || (await pause(step.chunkDelayMs, ctx.signal));
  const finish = (reason: string) => {
    chunk({}, reason);
    if (ctx.includeUsage) {
      send({ id: ctx.id, object: "chat.completion.chunk", created, model: ctx.model, choices: [], usage: usageFor(step, ctx, outputChars(step)) });
    }
    res.end("data: [DONE]\n\n");
  };

  chunk({ role: "assistant", content: "" });
  switch (step.kind) {
    case "text": {
      if (step.reasoning) chunk({ reasoning_content: step.reasoning });
      for (const piece of split(step.text, step.chunks)) {
        if (!(await gap())) return;
        chunk({ content: piece });
      }
      return finish("stop");
    }
    case "tool_calls": {
      if (step.text) chunk({ content: step.text });
      step.calls.forEach((call, index) => {
        const id = toolCallId(ctx, call, index);
        chunk({ tool_calls: [{ index, id, type: "function", function: { name: call.name, arguments: "" } }] });
        for (const fragment of split(argumentsOf(call), 3)) chunk({ tool_calls: [{ index, function: { arguments: fragment } }] });
      });
      return finish("tool_calls");
    }
    case "mid_stream_error": {
      chunk({ content: step.text });
      if (step.mode === "reset") {
        // Cut the connection a moment after the partial text: cut at once, opencode (bun fetch)
        // never sees the text and reports "Cannot connect to API" instead of a broken stream.
        if (await pause(step.cutAfterMs, ctx.signal)) res.destroy();
        return;
      }
      if (step.mode === "error-chunk") send({ error: { message: step.message, type: "server_error", code: "stream_error" } });
      res.end();
      return;
    }
    case "hang": {
      if (step.text) chunk({ content: step.text });
      return untilAborted(ctx.signal);
    }
  }
}

async function respondJson(step: Exclude<Step, { kind: "http_error" }>, res: ServerResponse, ctx: ReplyContext): Promise<void> {
  if (step.kind === "hang") {
    // No headers at all: the client waits until it gives up.
    return untilAborted(ctx.signal);
  }
  if (step.kind === "mid_stream_error") {
    if (step.mode === "reset") {
      res.destroy();
      return;
    }
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: step.message, type: "server_error", code: "stream_error" } }));
    return;
  }
  const message: Record<string, unknown> = { role: "assistant", content: step.kind === "text" ? step.text : (step.text ?? null) };
  if (step.kind === "text" && step.reasoning) message.reasoning_content = step.reasoning;
  if (step.kind === "tool_calls") {
    message.tool_calls = step.calls.map((call, index) => ({
      id: toolCallId(ctx, call, index),
      type: "function",
      function: { name: call.name, arguments: argumentsOf(call) },
    }));
  }
  const body = {
    id: ctx.id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices: [{ index: 0, message, finish_reason: step.kind === "tool_calls" ? "tool_calls" : "stop" }],
    usage: usageFor(step, ctx, outputChars(step)),
  };
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
