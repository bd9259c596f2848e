// A small LLM API on 127.0.0.1 for the real client CLIs (test/e2e-clients): each API module turns a
// request into a Conversation and a Step into that API's (streamed) answer; this file serves them
// and records every request so a test can read what the client's model was shown.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { nextStep, type ClientPlan, type Conversation, type Step } from "./script.js";

export interface ApiModule {
  /** Handles the request if it is this API's; false lets the server answer 404. */
  handle(req: ApiRequest, plan: ClientPlan, res: ServerResponse): boolean;
}

export interface ApiRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

export interface RecordedRequest extends ApiRequest {
  conversation?: Conversation;
  step?: Step;
}

export interface LlmApi {
  /** `http://127.0.0.1:PORT` (no path: each client adds its own). */
  readonly url: string;
  readonly requests: readonly RecordedRequest[];
  /** The first request (recorded or still to come) that `wanted` picks; rejects at the ceiling. */
  request(wanted: (r: RecordedRequest) => boolean, ceilingMs: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

/** Runs one module's answer and records what it decided. */
export function answer(req: ApiRequest, plan: ClientPlan, conversation: Conversation): Step {
  const step = nextStep(plan, conversation);
  (req as RecordedRequest).conversation = conversation;
  (req as RecordedRequest).step = step;
  return step;
}

export async function startLlmApi(api: ApiModule, plan: ClientPlan): Promise<LlmApi> {
  const requests: RecordedRequest[] = [];
  const arrivals = new Set<(r: RecordedRequest) => void>();
  const sockets = new Set<Socket>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    let body: Record<string, unknown>;
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      body = { unparsed: raw.slice(0, 200) };
    }
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const request: RecordedRequest = { method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers: req.headers, body };
    requests.push(request);
    for (const arrived of arrivals) arrived(request);
    try {
      if (!api.handle(request, plan, res)) sendJson(res, 404, { error: { message: `scripted LLM API: no route for ${request.method} ${request.path}` } });
    } catch (error) {
      sendJson(res, 500, { error: { message: `scripted LLM API: ${(error as Error).message}` } });
    }
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    request: (wanted, ceilingMs) =>
      new Promise((resolve, reject) => {
        const seen = requests.find(wanted);
        if (seen) return resolve(seen);
        const timer = setTimeout(() => {
          arrivals.delete(arrived);
          reject(new Error(`scripted LLM API: no such request within ${ceilingMs} ms (${requests.length} requests)`));
        }, ceilingMs);
        const arrived = (r: RecordedRequest) => {
          if (!wanted(r)) return;
          clearTimeout(timer);
          arrivals.delete(arrived);
          resolve(r);
        };
        arrivals.add(arrived);
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

/** Server-sent events: `event:` lines where the API names its events, `data:` JSON each. */
export function sendSse(res: ServerResponse, events: Array<{ event?: string; data: unknown }>): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  for (const e of events) res.write(`${e.event ? `event: ${e.event}\n` : ""}data: ${JSON.stringify(e.data)}\n\n`);
  res.end();
}
