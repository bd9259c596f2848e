// Gemini (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`, and `:generateContent` for
// the side calls Gemini CLI makes) for Gemini CLI: a functionCall part, then text. Side calls that
// ask for JSON (its model router's classifier) get a value of their response schema, or Gemini CLI
// retries them with backoff for minutes.
import type { ServerResponse } from "node:http";
import { answer, sendJson, sendSse, type ApiModule, type ApiRequest } from "./server.js";
import { textOf, type ClientPlan, type Conversation, type Step } from "./script.js";

type Part = { functionResponse?: { response?: unknown }; [key: string]: unknown };

function conversation(body: Record<string, unknown>): Conversation {
  const declarations = ((body.tools as Array<{ functionDeclarations?: Array<{ name?: string }> }> | undefined) ?? []).flatMap(
    (t) => t.functionDeclarations ?? [],
  );
  const tools = declarations.flatMap((d) => (d.name ? [d.name] : []));
  const contents = (body.contents as Array<{ parts?: Part[] }> | undefined) ?? [];
  const toolResults = contents.flatMap((c) => (c.parts ?? []).filter((p) => p.functionResponse).map((p) => textOf(p.functionResponse!.response)));
  return { tools, toolResults };
}

function candidate(step: Step) {
  const part = step.kind === "tool" ? { functionCall: { name: step.name, args: step.args } } : { text: step.text };
  return {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 },
    modelVersion: "gemini-scripted",
  };
}

type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema; enum?: unknown[] };

/** The plainest value of a (Gemini or JSON) schema: first enum value, 1, false, "", [] or an object of those. */
function sampleOf(schema: Schema | undefined): unknown {
  if (!schema) return {};
  if (schema.enum?.length) return schema.enum[0];
  switch ((schema.type ?? "object").toLowerCase()) {
    case "string":
      return "scripted";
    case "number":
    case "integer":
      return 1;
    case "boolean":
      return false;
    case "array":
      return [];
    default:
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, sampleOf(v)]));
  }
}

function jsonAsked(body: Record<string, unknown>): Schema | undefined {
  const config = (body.generationConfig ?? {}) as { responseMimeType?: string; responseSchema?: Schema; responseJsonSchema?: Schema };
  if (config.responseMimeType !== "application/json") return undefined;
  return config.responseJsonSchema ?? config.responseSchema ?? {};
}

export const geminiGenerate: ApiModule = {
  handle(req: ApiRequest, plan: ClientPlan, res: ServerResponse): boolean {
    if (req.method !== "POST") return false;
    if (req.path.endsWith(":countTokens")) {
      sendJson(res, 200, { totalTokens: 100 });
      return true;
    }
    const streamed = req.path.endsWith(":streamGenerateContent");
    if (!streamed && !req.path.endsWith(":generateContent")) return false;
    const schema = jsonAsked(req.body);
    const step = schema ? ({ kind: "text", text: JSON.stringify(sampleOf(schema)) } as const) : answer(req, plan, conversation(req.body));
    const body = candidate(step);
    if (streamed) sendSse(res, [{ data: body }]);
    else sendJson(res, 200, body);
    return true;
  },
};
