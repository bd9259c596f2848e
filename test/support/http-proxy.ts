// A small HTTP proxy on 127.0.0.1 in front of one or more MCP servers: each request goes to the next
// target in turn (round-robin, what a load balancer without affinity does), or, for a 2025-11-25
// client, to the target that opened its session (the `mcp-session-id` it answered). It records
// what passed: method, the JSON-RPC body and which target served it, so a test can read the
// protocol a real client negotiated and which replica answered each call. Responses (SSE included)
// stream through untouched.
import { createServer, request as httpRequest, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface Passed {
  method: string;
  /** The JSON-RPC message(s) the client sent, parsed; undefined for a GET/DELETE. */
  body?: unknown;
  /** Index of the target that served it. */
  target: number;
  status?: number;
  sessionId?: string;
}

export interface HttpProxy {
  /** `http://127.0.0.1:PORT/mcp` */
  url: string;
  passed: readonly Passed[];
  close(): Promise<void>;
}

export async function startProxy(targets: string[]): Promise<HttpProxy> {
  const passed: Passed[] = [];
  const sessions = new Map<string, number>();
  const sockets = new Set<Socket>();
  let next = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const sessionId = header(req, "mcp-session-id");
    const target = sessionId !== undefined && sessions.has(sessionId) ? sessions.get(sessionId)! : next++ % targets.length;
    const record: Passed = { method: req.method ?? "GET", target, ...(sessionId ? { sessionId } : {}) };
    if (raw.length > 0) {
      try {
        record.body = JSON.parse(raw.toString("utf8"));
      } catch {
        record.body = { unparsed: raw.toString("utf8").slice(0, 200) };
      }
    }
    passed.push(record);
    const url = new URL(req.url ?? "/", targets[target]);
    const upstream = httpRequest(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (answer) => {
      record.status = answer.statusCode;
      const opened = header(answer, "mcp-session-id");
      if (opened) sessions.set(opened, target);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy: ${error.message}`);
    });
    // The client closing its stream (a cancel on 2026-07-28) closes the upstream one too.
    res.on("close", () => upstream.destroy());
    upstream.end(raw);
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    passed,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function header(m: IncomingMessage, name: string): string | undefined {
  const v = m.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
