// What the scripted client model does, the same for every API: on a request that offers our tools it
// calls them in plan order (the n-th call once n tool results are in the conversation), then says
// its final text. Requests that offer none of them (titles, summaries, routing checks the clients
// make on their own) get a short text. Stateless on purpose: a client retrying or interleaving side
// requests still gets the step its conversation is at.

export type Step = { kind: "tool"; name: string; args: Record<string, unknown> } | { kind: "text"; text: string };

/** One planned call: a tool by the end of its name (clients prefix it: `mcp__srv__oc_status`). */
export interface PlannedCall {
  tool: string;
  args: Record<string, unknown>;
}

export interface ClientPlan {
  calls: PlannedCall[];
  /** Said after the last tool result. */
  finalText: string;
}

/** What an API module reads out of a request. */
export interface Conversation {
  /** Names of the tools the request offers. */
  tools: string[];
  /** Outputs of the tool calls already made, oldest first. */
  toolResults: string[];
}

export const SIDE_ANSWER = "ok";

/** The full tool name the client uses for a planned call (`oc_status` → `mcp__opencode__oc_status`). */
export function offeredName(tools: string[], suffix: string): string | undefined {
  return tools.find((t) => t === suffix || t.endsWith(`_${suffix}`) || t.endsWith(`__${suffix}`) || t.endsWith(`.${suffix}`));
}

export function nextStep(plan: ClientPlan, c: Conversation): Step {
  const first = plan.calls[0];
  if (!first || !offeredName(c.tools, first.tool)) return { kind: "text", text: SIDE_ANSWER };
  const call = plan.calls[c.toolResults.length];
  if (!call) return { kind: "text", text: plan.finalText };
  const name = offeredName(c.tools, call.tool);
  if (!name) return { kind: "text", text: `tool ${call.tool} is not offered` };
  return { kind: "tool", name, args: call.args };
}

/** A text of unknown shape (string, content parts, nested objects) flattened for assertions. */
export function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(textOf).join("\n");
  if (value && typeof value === "object") return Object.values(value).map(textOf).join("\n");
  return value === undefined || value === null ? "" : String(value);
}
