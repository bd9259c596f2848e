// A tools/call that became a task answers with a CreateTaskResult (`resultType: "task"` and the
// task's fields, no `content`). The SDK (2.4.0) checks every tools/call result against
// CallToolResult, which requires `content`, so the tool handler answers a CallToolResult that
// carries the handle under a private `_meta` key, and this layer puts the handle in its place as
// the answer leaves on the transport. The key never reaches a client.
// This module is the wire side, which every server installs at start; the answer that carries a
// handle is handle-result.ts's, loaded with a tool's call.
import type { McpServer } from "@modelcontextprotocol/server";

export const HANDLE_KEY = "opencode-conductor/task-handle";

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
