// The host side that @modelcontextprotocol/ext-tasks asks of a 2026-07-28 client: a raw request
// path (`rawDispatch`) for the task traffic the SDK client's codecs do not carry (a tools/call that
// answers `resultType: "task"`, tasks/*). Each request is one Streamable HTTP POST with the
// standard headers (Mcp-Method, and Mcp-Name: the tool's name, or the task id the package sets);
// the answer is read from the JSON body or the SSE stream. Every exchange is kept, so a test can
// show the traffic itself.
import { createServer } from "node:net";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  type SerializedTaskReference,
  type TaskEnabledSession,
  type TaskView,
  type ToolExecution,
} from "@modelcontextprotocol/ext-tasks/client";
import type { JsonValue } from "@modelcontextprotocol/ext-tasks/core";

export interface Exchange {
  request: { method: string; params?: Record<string, unknown> };
  response: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}

export interface TaskDispatch {
  dispatch(
    request: JsonValue,
    options?: { signal?: AbortSignal; context?: { headers?: Readonly<Record<string, string>> } },
  ): Promise<{ kind: "result"; result: JsonValue } | { kind: "error"; error: { code: number; message: string; data?: JsonValue } }>;
  readonly exchanges: Exchange[];
  /** Where the requests go now (a restarted server may listen elsewhere). */
  url: string;
}

let nextId = 1;

export function taskDispatch(url: string, headers: Record<string, string> = {}): TaskDispatch {
  const exchanges: Exchange[] = [];
  const self: TaskDispatch = {
    url,
    exchanges,
    async dispatch(request, options = {}) {
      const r = request as { method: string; params?: Record<string, unknown> };
      const id = nextId++;
      const given = Object.keys(options.context?.headers ?? {}).some((h) => h.toLowerCase() === "mcp-name");
      const name = given ? undefined : ((r.params?.name as string | undefined) ?? (r.params?.taskId as string | undefined));
      const res = await fetch(self.url, {
        method: "POST",
        signal: options.signal,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": r.method,
          ...(name ? { "mcp-name": name } : {}),
          ...headers,
          ...options.context?.headers,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id, ...r }),
      });
      const message = await messageOf(res, id);
      exchanges.push({ request: r, response: message });
      return message.error
        ? { kind: "error", error: message.error as { code: number; message: string; data?: JsonValue } }
        : { kind: "result", result: message.result as JsonValue };
    },
  };
  return self;
}

async function messageOf(res: Response, id: number): Promise<Exchange["response"]> {
  const body = await res.text();
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) return JSON.parse(body) as Exchange["response"];
  for (const event of body.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trim())
      .join("\n");
    if (!data) continue;
    const message = JSON.parse(data) as Exchange["response"] & { id?: unknown };
    if (message.id === id) return message;
  }
  throw new Error(`no answer to request ${id} in the event stream (HTTP ${res.status}): ${body.slice(0, 500)}`);
}

/** A port nothing listens on now (for a server that must come back on the same address). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

export type FormAnswer = { action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> };

/** A 2026-07-28 SDK client on `url` and its ext-tasks session; `answer` answers each form of a task. */
export async function taskClient(url: string, answer?: (params: unknown) => FormAnswer) {
  const clientInfo = { name: "ext-tasks-e2e", version: "1.0.0" };
  const clientCapabilities = { elicitation: { form: {} } };
  const client = new Client(clientInfo, { capabilities: clientCapabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const raw = taskDispatch(url);
  const session = createTaskSessionFromClient(client, {
    endpointId: "opencode-conductor-e2e",
    rawDispatch: raw.dispatch,
    v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo, clientCapabilities },
    ...(answer ? { onInputRequest: async (request: { kind: string; params?: unknown }) => answer(request.params) as never } : {}),
  });
  return {
    client,
    session,
    raw,
    async close() {
      await session.close().catch(() => undefined);
      await client.close().catch(() => undefined);
    },
  };
}

/** Polls the task until it shows `status` (a generous ceiling), as a client that stopped driving it would. */
export async function untilStatus(session: TaskEnabledSession, taskId: Parameters<TaskEnabledSession["task"]>[0], status: string): Promise<TaskView> {
  const controller = session.task(taskId);
  let view = await controller.snapshot();
  for (let i = 0; i < 60 && view.status !== status; i++) view = await new Promise((r) => setTimeout(r, 1000)).then(() => controller.snapshot());
  return view;
}

/**
 * The client keeps the task's reference and lets go; `restart` kills and starts the server again and
 * gives a new client, which resumes the task by its reference and settles it.
 */
export async function settleAfterRestart(execution: ToolExecution<unknown>, restart: () => Promise<{ session: TaskEnabledSession }>) {
  if (execution.kind !== "task") throw new Error(`expected a task, got an ${execution.kind} result`);
  let reference!: SerializedTaskReference;
  await execution.handoff((r) => void (reference = r));
  const { session } = await restart();
  const resumed = await session.resumeTask(reference);
  return { taskId: resumed.kind === "task" ? resumed.handle.taskId : undefined, ...(await resumed.settle()) };
}
