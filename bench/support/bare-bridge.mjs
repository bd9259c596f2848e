// The yardstick for bench:scale's CPU per task: the least an MCP bridge to opencode can do for one
// delegation, on the same SDK (v2, @modelcontextprotocol/server), transport and HTTP client (fetch)
// as ours. One tool: create a session, prompt it, and answer when the session's turn ends on one
// shared event stream. No records, no audit, no checks, no summary: what is left of our CPU per task
// above this is what those cost. Reads OPENCODE_URL, OPENCODE_PASSWORD and (1.x)
// OPENCODE_CONDUCTOR_DIRECTORY, as our server does; BARE_MAJOR=2 speaks opencode 2.x's /api.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

const url = process.env.OPENCODE_URL;
const directory = encodeURIComponent(process.env.OPENCODE_CONDUCTOR_DIRECTORY ?? "");
const v2 = process.env.BARE_MAJOR === "2";
const headers = {
  authorization: `Basic ${Buffer.from(`opencode:${process.env.OPENCODE_PASSWORD}`).toString("base64")}`,
  "content-type": "application/json",
};
/** Turns waiting for their end, by session id. */
const waiting = new Map();

async function post(path, body) {
  const response = await fetch(`${url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.status === 204 ? undefined : response.json();
}

/** The session a 1.x or 2.x event is about, when it ends a turn. */
function endedSession(event) {
  if (v2) return event.type?.startsWith("session.execution.") && event.type !== "session.execution.started" ? event.data?.sessionID : undefined;
  return event.payload?.type === "session.idle" ? event.payload.properties?.sessionID : undefined;
}

async function listen() {
  const response = await fetch(`${url}${v2 ? "/api/event" : "/global/event"}`, { headers });
  let buffer = "";
  for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (!line.startsWith("data:")) continue;
      const id = endedSession(JSON.parse(line.slice(5)));
      if (id !== undefined) waiting.get(id)?.();
    }
  }
}
listen().catch((error) => console.error(error));

async function delegate({ task, model }) {
  const [providerID, modelID] = model.split("/");
  let id;
  if (v2) id = (await post("/api/session", { title: task, model: { id: modelID, providerID } })).data.id;
  else id = (await post(`/session?directory=${directory}`, { title: task })).id;
  const ended = new Promise((resolve) => waiting.set(id, resolve));
  if (v2) await post(`/api/session/${id}/prompt`, { text: task });
  else await post(`/session/${id}/prompt_async?directory=${directory}`, { model: { providerID, modelID }, parts: [{ type: "text", text: task }] });
  await ended;
  waiting.delete(id);
  return { content: [{ type: "text", text: `done ${id}` }], structuredContent: { status: "done", session_id: id } };
}

serveStdio(() => {
  const server = new McpServer({ name: "bare-bridge", version: "1.0.0" });
  server.registerTool(
    "oc_delegate",
    {
      description: "Delegate a task",
      inputSchema: z.object({ task: z.string(), model: z.string() }),
      outputSchema: z.object({ status: z.string(), session_id: z.string() }),
    },
    delegate,
  );
  return server;
});
