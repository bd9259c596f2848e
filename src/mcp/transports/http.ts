// Streamable HTTP (MCP 2025-11-25): loopback by default, Host-header (DNS rebinding) and Origin
// checks, and a bearer token that is required whenever the server listens beyond loopback. One MCP
// session = one McpServer + transport; all of them share the same opencode connection. Each session
// keeps its SSE events in the SDK's event store, so a client whose stream drops (mid-delegation)
// reconnects with Last-Event-ID and gets what it missed, the result included. A session nobody has
// used for `sessionTtlMs` (and with no request still open) is closed: clients that vanish without a
// DELETE would otherwise keep theirs forever.
import { randomUUID, timingSafeEqual } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

export interface HttpOptions {
  host: string;
  port: number;
  token?: string;
  /** Idle time after which a session is closed (default 30 min). */
  sessionTtlMs?: number;
  /** Browser origins allowed besides loopback ones (`scheme://host[:port]`). */
  origins?: string[];
  /** Told each time an idle session is closed. */
  onExpire?(sessionId: string): void;
  /** Builds a fresh McpServer for each MCP session. */
  newServer(): McpServer;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);
/** Largest JSON-RPC body read before a session exists (an initialize request is tiny). */
const MAX_INIT_BODY = 1024 * 1024;
const DEFAULT_SESSION_TTL_MS = 30 * 60_000;
export const NO_OAUTH =
  'This server does not use OAuth: send the header Authorization: Bearer <OPENCODE_CONDUCTOR_HTTP_TOKEN> (claude mcp add --transport http NAME URL --header "Authorization: Bearer <token>")';
/** What a client waits before reconnecting a dropped SSE stream (the `retry` of the priming event). */
const RETRY_MS = 1_000;

/** A session's transport and how it is used: open requests never expire, idle time counts from the last one's end. */
interface Session {
  transport: StreamableHTTPServerTransport;
  open: number;
  idleSince: number;
}

export function isLoopback(host: string): boolean {
  // An IPv4 literal in 127/8 only: a name such as 127.0.0.1.evil.example must not pass.
  return LOOPBACK.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * DNS rebinding: a web page whose name resolves to 127.0.0.1 reaches us with its own name in Host.
 * On loopback we accept only loopback names. Off loopback a token is mandatory and is the guard (a
 * rebinding page cannot know it), and clients legitimately use any name or address of this machine.
 */
export function hostAllowed(hostHeader: string | undefined, bindHost: string): boolean {
  if (!isLoopback(bindHost)) return true;
  if (!hostHeader) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${hostHeader}`).hostname;
  } catch {
    return false;
  }
  return isLoopback(hostname);
}

/**
 * The spec (2025-11-25, transports) requires a 403 for an invalid Origin: a web page must not drive
 * a local server. Requests without Origin (CLI clients) pass; so do loopback origins and the
 * configured ones, compared as `scheme://host[:port]`.
 */
export function originAllowed(origin: string | undefined, allowed: readonly string[] = []): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // includes the opaque "null" origin
  }
  if ((url.protocol === "http:" || url.protocol === "https:") && isLoopback(url.hostname)) return true;
  return allowed.some((a) => a === url.origin);
}

export async function startHttp(options: HttpOptions): Promise<{ server: Server; url: string; sessionCount(): number; close(): Promise<void> }> {
  if (!isLoopback(options.host) && !options.token) {
    throw new Error(`Refusing to listen on ${options.host} without a token: set OPENCODE_CONDUCTOR_HTTP_TOKEN, or listen on 127.0.0.1.`);
  }
  const sessions = new Map<string, Session>();
  const ttl = options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions) {
        if (s.open === 0 && now - s.idleSince >= ttl) {
          sessions.delete(id);
          void s.transport.close().catch(() => undefined);
          options.onExpire?.(id);
        }
      }
    },
    Math.max(50, Math.min(ttl / 4, 60_000)),
  );
  sweep.unref();

  /** Counts a request as open until its response is over (an SSE stream can last a long time). */
  function track(session: Session, res: ServerResponse): void {
    session.open += 1;
    res.once("close", () => {
      session.open -= 1;
      session.idleSince = Date.now();
    });
  }

  const server = createHttpServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { jsonrpc: "2.0", error: { code: -32603, message: `Internal error: ${(error as Error).message}` }, id: null });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Checked before anything else, for every path and every session.
    if (!hostAllowed(req.headers.host, options.host)) {
      return json(res, 403, { jsonrpc: "2.0", error: { code: -32000, message: `Invalid Host header: ${req.headers.host ?? "(none)"}` }, id: null });
    }
    const origin = header(req, "origin");
    if (!originAllowed(origin, options.origins)) {
      const shown = (origin ?? "").slice(0, 200);
      return json(res, 403, {
        jsonrpc: "2.0",
        error: { code: -32000, message: `Forbidden: Origin ${shown} is not allowed (loopback origins are; add others to OPENCODE_CONDUCTOR_HTTP_ORIGINS)` },
        id: null,
      });
    }
    const url = new URL(req.url ?? "/", "http://localhost");
    // A client that got 401 without a token goes looking for OAuth (discovery, then client
    // registration) and reports that failure: say there what the fix is.
    if (/^\/(\.well-known\/(oauth|openid)|register$|authorize$|token$)/.test(url.pathname)) return json(res, 404, { error: NO_OAUTH });
    if (url.pathname !== "/mcp") return json(res, 404, { error: "Not found: the MCP endpoint is /mcp" });
    if (options.token && !validToken(req.headers.authorization, options.token)) {
      res.setHeader("www-authenticate", 'Bearer realm="opencode-conductor"');
      return json(res, 401, {
        jsonrpc: "2.0",
        error: { code: -32001, message: "Unauthorized: send Authorization: Bearer <OPENCODE_CONDUCTOR_HTTP_TOKEN>" },
        id: null,
      });
    }
    const sessionId = header(req, "mcp-session-id");
    const existing = sessionId ? sessions.get(sessionId) : undefined;
    if (existing) {
      track(existing, res);
      return existing.transport.handleRequest(req, res);
    }

    const body = req.method === "POST" ? await readJson(req) : undefined;
    if (body === TOO_LARGE) {
      // Answer, then close the connection: the rest of the body is never read.
      res.setHeader("connection", "close");
      res.once("finish", () => req.socket.destroy());
      return json(res, 413, {
        jsonrpc: "2.0",
        error: { code: -32000, message: `Request body too large: a request before initialize may be at most ${MAX_INIT_BODY} bytes` },
        id: null,
      });
    }
    if (sessionId || req.method !== "POST" || !isInitializeRequest(body)) {
      // Unknown session ids get 404 so that spec-following clients start a new session.
      return json(res, sessionId ? 404 : 400, {
        jsonrpc: "2.0",
        error: { code: -32000, message: sessionId ? "Unknown or expired MCP session: initialize again" : "Bad request: start with an initialize request" },
        id: null,
      });
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // One store per session: it goes when the session is closed or expires.
      eventStore: new InMemoryEventStore(),
      retryInterval: RETRY_MS,
      onsessioninitialized: (id) => void sessions.set(id, session),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    const session: Session = { transport, open: 0, idleSince: Date.now() };
    track(session, res);
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
    sessionCount: () => sessions.size,
    async close() {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((s) => s.transport.close().catch(() => undefined)));
      // close() waits for open connections (an SSE stream, keep-alive sockets): drop them first.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function validToken(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(authorization ?? "");
  const given = Buffer.from(match?.[1] ?? "");
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const TOO_LARGE = Symbol("too large");

/** The JSON body, undefined when it is not JSON, TOO_LARGE past MAX_INIT_BODY (the rest is left unread). */
function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (value: unknown) => {
      if (settled) return;
      settled = true;
      resolve(value);
    };
    req.on("data", (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > MAX_INIT_BODY) {
        req.pause();
        return settle(TOO_LARGE);
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      try {
        settle(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        settle(undefined);
      }
    });
    req.on("error", () => settle(undefined));
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
