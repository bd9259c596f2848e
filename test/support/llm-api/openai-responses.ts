// OpenAI Responses (`POST /v1/responses`, streamed) for Codex: a function_call output item, then an
// assistant message, each announced by response.output_item.added/done, closed by response.completed.
// Codex offers each MCP server as a `namespace` tool holding its functions; a call of one names the
// function and its namespace (here `namespace.function` inside the script).
import type { ServerResponse } from "node:http";
import { answer, sendSse, type ApiModule, type ApiRequest } from "./server.js";
import { textOf, type ClientPlan, type Conversation, type Step } from "./script.js";

type Item = { type?: string; name?: string; output?: unknown; [key: string]: unknown };

function conversation(body: Record<string, unknown>): Conversation {
  const tools = ((body.tools as Item[] | undefined) ?? []).flatMap((t) =>
    t.type === "namespace" ? ((t.tools as Item[] | undefined) ?? []).map((f) => `${t.name}.${f.name}`) : typeof t.name === "string" ? [t.name] : [],
  );
  const input = Array.isArray(body.input) ? (body.input as Item[]) : [];
  const toolResults = input.filter((i) => i.type === "function_call_output" || i.type === "custom_tool_call_output").map((i) => textOf(i.output));
  return { tools, toolResults };
}

let ids = 0;

function item(step: Step): Record<string, unknown> {
  ids += 1;
  const [namespace, name] = step.kind === "tool" && step.name.includes(".") ? step.name.split(".", 2) : [undefined, step.kind === "tool" ? step.name : ""];
  return step.kind === "tool"
    ? {
        type: "function_call",
        id: `fc_scripted_${ids}`,
        call_id: `call_scripted_${ids}`,
        name,
        ...(namespace ? { namespace } : {}),
        arguments: JSON.stringify(step.args),
        status: "completed",
      }
    : {
        type: "message",
        id: `msg_scripted_${ids}`,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: step.text, annotations: [] }],
      };
}

function stream(res: ServerResponse, model: string, out: Record<string, unknown>): void {
  const id = `resp_scripted_${ids}`;
  const response = { id, object: "response", created_at: Math.floor(Date.now() / 1000), model, status: "in_progress", output: [] as unknown[] };
  const usage = {
    input_tokens: 100,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 20,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 120,
  };
  const text = out.type === "message" ? (out.content as Array<{ text: string }>)[0]!.text : undefined;
  sendSse(res, [
    { event: "response.created", data: { type: "response.created", sequence_number: 0, response } },
    {
      event: "response.output_item.added",
      data: {
        type: "response.output_item.added",
        sequence_number: 1,
        output_index: 0,
        item: { ...out, status: "in_progress", ...(text !== undefined ? { content: [] } : {}) },
      },
    },
    ...(text !== undefined
      ? [
          {
            event: "response.output_text.delta",
            data: { type: "response.output_text.delta", sequence_number: 2, item_id: out.id, output_index: 0, content_index: 0, delta: text },
          },
        ]
      : []),
    { event: "response.output_item.done", data: { type: "response.output_item.done", sequence_number: 3, output_index: 0, item: out } },
    {
      event: "response.completed",
      data: { type: "response.completed", sequence_number: 4, response: { ...response, status: "completed", output: [out], usage } },
    },
  ]);
}

export const openaiResponses: ApiModule = {
  handle(req: ApiRequest, plan: ClientPlan, res: ServerResponse): boolean {
    if (req.method !== "POST" || !req.path.endsWith("/responses")) return false;
    stream(res, String(req.body.model ?? "scripted"), item(answer(req, plan, conversation(req.body))));
    return true;
  },
};
