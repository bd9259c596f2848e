// Anthropic Messages (`POST /v1/messages`, streamed or not) for Claude Code: tool_use blocks with
// input_json_delta, then text. `count_tokens` gets a small count. Claude Code's default tool search
// defers MCP tools (only their names are listed, or a note that a server is still connecting):
// the model then loads the planned tools with ToolSearch first, as a real model is told to.
import type { ServerResponse } from "node:http";
import { answer, sendJson, sendSse, type ApiModule, type ApiRequest, type RecordedRequest } from "./server.js";
import { offeredName, textOf, type ClientPlan, type Conversation, type Step } from "./script.js";

type Block = { type?: string; content?: unknown; id?: string; name?: string; tool_use_id?: string; [key: string]: unknown };

const TOOL_SEARCH = "ToolSearch";

function conversation(body: Record<string, unknown>): Conversation & { searched: boolean } {
  const messages = (body.messages as Array<{ role: string; content: unknown }> | undefined) ?? [];
  const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Block[]) : []));
  // A deferred tool (defer_loading) is callable once a ToolSearch result referenced it.
  const loaded = new Set(
    blocks
      .flatMap((b) => (b.type === "tool_result" && Array.isArray(b.content) ? (b.content as Block[]) : []))
      .flatMap((b) => (b.type === "tool_reference" ? [b.tool_name as string] : [])),
  );
  const tools = ((body.tools as Array<{ name?: string; defer_loading?: boolean }> | undefined) ?? []).flatMap((t) =>
    t.name && (!t.defer_loading || loaded.has(t.name)) ? [t.name] : [],
  );
  const searches = new Set(blocks.filter((b) => b.type === "tool_use" && b.name === TOOL_SEARCH).map((b) => b.id));
  const toolResults = blocks.filter((b) => b.type === "tool_result" && !searches.has(b.tool_use_id)).map((b) => textOf(b.content));
  return { tools, toolResults, searched: searches.size > 0 };
}

/** The planned tools are deferred behind Claude Code's tool search: the ToolSearch call that loads them. */
function toolSearch(body: Record<string, unknown>, plan: ClientPlan, c: Conversation & { searched: boolean }): Step | undefined {
  const first = plan.calls[0];
  if (!first || c.searched || !c.tools.includes(TOOL_SEARCH) || offeredName(c.tools, first.tool)) return undefined;
  // Named in the deferred list, or (a server still connecting) by keyword: ToolSearch waits for it.
  const text = JSON.stringify(body);
  const names = [...new Set(plan.calls.flatMap((call) => [...text.matchAll(new RegExp(`mcp__[\\w-]+__${call.tool}\\b`, "g"))].map((m) => m[0])))];
  const query = names.length > 0 ? `select:${names.join(",")}` : plan.calls.map((call) => call.tool).join(" ");
  return { kind: "tool", name: TOOL_SEARCH, args: { query, max_results: plan.calls.length + 5 } };
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
    const c = conversation(req.body);
    const search = toolSearch(req.body, plan, c);
    if (search) Object.assign(req as RecordedRequest, { conversation: c, step: search });
    const m = message(search ?? answer(req, plan, c), String(req.body.model ?? "claude-scripted"));
    if (req.body.stream) stream(res, m);
    else sendJson(res, 200, m);
    return true;
  },
};
