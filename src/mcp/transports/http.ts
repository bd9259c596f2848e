// Streamable HTTP: loopback by default, Host-header (DNS rebinding) protection, and a bearer
// token that is required whenever the server listens beyond loopback. One MCP session = one
// McpServer + transport; all of them share the same opencode connection.
import { randomUUID, timingSafeEqual } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

export interface HttpOptions {
  host: string;
  port: number;
  token?: string;
  /** Builds a fresh McpServer for each MCP session. */
  newServer(): McpServer;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith("127.");
}

export async function startHttp(options: HttpOptions): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  if (!isLoopback(options.host) && !options.token) {
    throw new Error(`Refusing to listen on ${options.host} without a token: set OPENCODE_CONDUCTOR_HTTP_TOKEN, or listen on 127.0.0.1.`);
  }
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const allowedHosts = (port: number) => [...LOOPBACK, options.host].flatMap((h) => [h, `${h}:${port}`]);

  const server = createHttpServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { jsonrpc: "2.0", error: { code: -32603, message: `Internal error: ${(error as Error).message}` }, id: null });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== "/mcp") return json(res, 404, { error: "Not found: the MCP endpoint is /mcp" });
    if (options.token && !validToken(req.headers.authorization, options.token)) {
      res.setHeader("www-authenticate", 'Bearer realm="opencode-conductor"');
      return json(res, 401, { jsonrpc: "2.0", error: { code: -32001, message: "Unauthorized: send Authorization: Bearer <OPENCODE_CONDUCTOR_HTTP_TOKEN>" }, id: null });
    }
    const sessionId = header(req, "mcp-session-id");
    const existing = sessionId ? sessions.get(sessionId) : undefined;
    if (existing) return existing.handleRequest(req, res);

    const body = req.method === "POST" ? await readJson(req) : undefined;
    if (sessionId || req.method !== "POST" || !isInitializeRequest(body)) {
      return json(res, 400, { jsonrpc: "2.0", error: { code: -32000, message: sessionId ? "Unknown or expired MCP session: initialize again" : "Bad request: start with an initialize request" }, id: null });
    }
    const port = (server.address() as { port: number }).port;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableDnsRebindingProtection: true,
      allowedHosts: allowedHosts(port),
      onsessioninitialized: (id) => void sessions.set(id, transport),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await options.newServer().connect(transport);
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  const hostForUrl = options.host.includes(":") && !options.host.startsWith("[") ? `[${options.host}]` : options.host;
  return {
    server,
    url: `http://${hostForUrl}:${port}/mcp`,
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => undefined)));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function validToken(authorization: string | undefined, token: string): boolean {
  const given = Buffer.from(authorization?.replace(/^Bearer\s+/i, "") ?? "");
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return undefined;
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
