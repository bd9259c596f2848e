// Anthropic Messages (`POST /v1/messages`, streamed or not) for Claude Code: tool_use blocks with
// input_json_delta, then text. `count_tokens` gets a small count.
import type { ServerResponse } from "node:http";
import { answer, sendJson, sendSse, type ApiModule, type ApiRequest } from "./server.js";
import { textOf, type ClientPlan, type Conversation, type Step } from "./script.js";

type Block = { type?: string; content?: unknown; [key: string]: unknown };

function conversation(body: Record<string, unknown>): Conversation {
  const tools = ((body.tools as Array<{ name?: string }> | undefined) ?? []).flatMap((t) => (t.name ? [t.name] : []));
  const messages = (body.messages as Array<{ role: string; content: unknown }> | undefined) ?? [];
  const toolResults = messages.flatMap((m) =>
    Array.isArray(m.content) ? (m.content as Block[]).filter((b) => b.type === "tool_result").map((b) => textOf(b.content)) : [],
  );
  return { tools, toolResults };
}

let ids = 0;

function message(step: Step, model: string) {
  ids += 1;
  const content =
    step.kind === "tool" ? [{ type: "tool_use", id: `toolu_scripted_${ids}`, name: step.name, input: step.args }] : [{ type: "text", text: step.text }];
  return {
    id: `msg_scripted_${ids}`,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: step.kind === "tool" ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

function stream(res: ServerResponse, m: ReturnType<typeof message>): void {
  const block = m.content[0] as { type: string; input?: unknown; text?: string };
  const start = block.type === "tool_use" ? { ...block, input: {} } : { type: "text", text: "" };
  const delta = block.type === "tool_use" ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) } : { type: "text_delta", text: block.text };
  sendSse(res, [
    { event: "message_start", data: { type: "message_start", message: { ...m, content: [], stop_reason: null, usage: { ...m.usage, output_tokens: 1 } } } },
    { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: start } },
    { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta } },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    {
      event: "message_delta",
      data: { type: "message_delta", delta: { stop_reason: m.stop_reason, stop_sequence: null }, usage: { output_tokens: m.usage.output_tokens } },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  ]);
}

export const anthropicMessages: ApiModule = {
  handle(req: ApiRequest, plan: ClientPlan, res: ServerResponse): boolean {
    if (req.method !== "POST") return false;
    if (req.path.endsWith("/v1/messages/count_tokens")) {
      sendJson(res, 200, { input_tokens: 100 });
      return true;
    }
    if (!req.path.endsWith("/v1/messages")) return false;
    const m = message(answer(req, plan, conversation(req.body)), String(req.body.model ?? "claude-scripted"));
    if (req.body.stream) stream(res, m);
    else sendJson(res, 200, m);
    return true;
  },
};
