// Approvals a call did not get: rejected (by the human or by the deny policy) or given back as
// BLOCKED because no person answered (the client cancelled the form, declined it faster than anyone
// could read it, or let it time out). Every tool result reports them, in its text and its structured
// content, so the calling model is never left believing a silent rejection was a success.
import type { CallToolResult } from "@modelcontextprotocol/server";

/** Who decided: a person through elicitation, the client on its own, or this server's deny policy. */
export type Decider = "human" | "client" | "policy";

export interface RefusedApproval {
  request_id: string;
  session_id: string;
  kind: "permission" | "question";
  /** One line saying what was asked (describeRequest). */
  what: string;
  by: Decider;
  /** rejected: opencode was told no; returned: left pending, for oc_answer. */
  outcome: "rejected" | "returned";
  /** The client's elicitation action (accept, decline, cancel) or `error` when asking failed. */
  action?: string;
  /** How long the client took to answer the form. */
  elapsed_ms?: number;
  reason: string;
}

/** The tool's result with the call's refusals added (text lines and structured `refused_approvals`). */
export function withRefusals(result: CallToolResult, refused: readonly RefusedApproval[]): CallToolResult {
  if (refused.length === 0) return result;
  const lines = ["", "Approvals not given during this call:", ...refused.map((r) => `- ${r.what}: ${r.reason}`)];
  const [first, ...rest] = result.content;
  const content =
    first?.type === "text"
      ? [{ ...first, text: `${first.text}\n${lines.join("\n")}` }, ...rest]
      : [{ type: "text" as const, text: lines.join("\n").trim() }, ...result.content];
  // An error result has no structured content (it would have to match the output schema): text only.
  return { ...result, content, ...(result.structuredContent ? { structuredContent: { ...result.structuredContent, refused_approvals: [...refused] } } : {}) };
}
