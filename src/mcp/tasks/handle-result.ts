// The tool handler's answer for a delegation that became a task (handles.ts puts the handle in its
// place as the answer leaves on the transport).
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Delegation } from "../../core/ledger/delegations.js";
import { HANDLE_KEY } from "./handles.js";
import { createTaskResult } from "./task-view.js";

/**
 * The tool handler's answer for a delegation that became a task. Its structured content fits the
 * output schema of each tool that can become a task (the SDK validates it), and says in our terms
 * what started; the client receives the handle instead.
 */
export function taskHandleResult(d: Delegation, scrub: (text: string) => string): CallToolResult {
  const sessions = d.sessions.filter((s): s is string => typeof s === "string");
  return {
    content: [{ type: "text", text: `Task ${d.id}: ${d.status}` }],
    structuredContent: { task_id: d.id, status: "running", session_id: sessions[0] ?? "", results: [], running: sessions },
    _meta: { [HANDLE_KEY]: createTaskResult(d, scrub) },
  };
}
