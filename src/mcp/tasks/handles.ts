// A tools/call that became a task answers with a CreateTaskResult (`resultType: "task"` and the
// task's fields, no `content`). The SDK (2.4.0) checks every tools/call result against
// CallToolResult, which requires `content`, so the tool handler answers a CallToolResult that
// carries the handle under a private `_meta` key, and this layer puts the handle in its place as
// the answer leaves on the transport. The key never reaches a client.
import type { CallToolResult, McpServer } from "@modelcontextprotocol/server";
import type { Delegation } from "../../core/ledger/delegations.js";
import { createTaskResult } from "./task-view.js";

const HANDLE_KEY = "opencode-conductor/task-handle";

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

type Message = { id?: unknown; result?: { _meta?: Record<string, unknown> } & Record<string, unknown> };

/** The handle in place of the result that carries it (anything else as it is). */
export function withTaskHandle<M>(message: M): M {
  const m = message as Message;
  const handle = m.result?._meta?.[HANDLE_KEY];
  if (handle === undefined) return message;
  const { [HANDLE_KEY]: _handle, ...meta } = m.result!._meta!;
  return { ...m, result: { ...(handle as object), ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) } } as M;
}

/** Every transport this server connects to sends task handles in their wire shape. */
export function sendTaskHandles(server: McpServer): void {
  const connect = server.connect.bind(server);
  server.connect = async (transport) => {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => send(withTaskHandle(message), options);
    return connect(transport);
  };
}
