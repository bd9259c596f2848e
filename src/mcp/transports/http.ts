// Streamable HTTP, both protocol eras on one endpoint: loopback by default, Host-header (DNS
// rebinding) and Origin checks, bounded bodies, and a bearer token that is required whenever the
// server listens beyond loopback. Each request is classified the way the SDK's own entry would
// (`isLegacyRequest`):
// - 2026-07-28 requests go to a stateless handler (`createMcpHandler`): a fresh McpServer per
//   request, no session id, nothing kept between requests, so any replica can serve any request
//   (what a call needs across rounds travels in its signed `requestState`, approval-rounds.ts).
// - 2025-11-25 clients keep their MCP session as before: one McpServer + transport per session, all
//   sharing the same opencode connection. Each session keeps its SSE events (event-store.ts), so a
//   client whose stream drops (mid-delegation) reconnects with Last-Event-ID and gets what it
//   missed, the result included. A session nobody has used for `sessionTtlMs` (and with no request
//   still open) is closed: clients that vanish without a DELETE would otherwise keep theirs forever.
import { randomUUID, timingSafeEqual } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { NodeStreamableHTTPServerTransport, toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, isInitializeRequest, isLegacyRequest, type McpServer, type ServerNotifier } from "@modelcontextprotocol/server";
import { DEFAULT_EVENT_BOUNDS, SessionEventStore } from "./event-store.js";

export interface HttpOptions {
  host: string;
  port: number;
  token?: string;
  /** Idle time after which a session is closed (default 5 min). */
  sessionTtlMs?: number;
  /** Most 2025-11-25 sessions open at once (default 100); the next initialize gets 503. */
  maxSessions?: number;
  /** Bytes each session's event store keeps at most (default 4 MiB; and at most 1,000 events). */
  maxEventBytes?: number;
  /** A request's headers and body must arrive within this (default 30 s; headers within 10 s at most). */
  requestTimeoutMs?: number;
  /** Browser origins allowed besides loopback ones (`scheme://host[:port]`). */
  origins?: string[];
  /** Told each time an idle session is closed. */
  onExpire?(sessionId: string): void;
  /** Builds a fresh McpServer for each 2025-11-25 session and for each 2026-07-28 request. */
  newServer(): McpServer;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);
/** Largest 2025-11-25 body read before a session exists (an initialize request is tiny). */
const MAX_INIT_BODY = 1024 * 1024;
/** Largest body read outside a session: a 2026-07-28 request carries its whole call (the SDK's own default). */
const MAX_BODY = 4 * 1024 * 1024;
export const DEFAULT_SESSION_TTL_MS = 5 * 60_000;
export const DEFAULT_MAX_SESSIONS = 100;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const MAX_HEADERS_TIMEOUT_MS = 10_000;
export const NO_OAUTH =
  'This server does not use OAuth: send the header Authorization: Bearer <OPENCODE_CONDUCTOR_HTTP_TOKEN> (claude mcp add --transport http NAME URL --header "Authorization: Bearer <token>")';
/** What a client waits before reconnecting a dropped SSE stream (the `retry` of the priming event). */
const RETRY_MS = 1_000;

/** A session's transport and how it is used: open requests never expire, idle time counts from the last one's end. */
interface Session {
  transport: NodeStreamableHTTPServerTransport;
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

export interface HttpServer {
  server: Server;
  url: string;
  /** 2025-11-25 sessions open now (2026-07-28 requests keep none). */
  sessionCount(): number;
  /** Change notifications for 2026-07-28 clients' `subscriptions/listen` streams. */
  notify: ServerNotifier;
  close(): Promise<void>;
}

export async function startHttp(options: HttpOptions): Promise<HttpServer> {
  if (!isLoopback(options.host) && !options.token) {
    throw new Error(`Refusing to listen on ${options.host} without a token: set OPENCODE_CONDUCTOR_HTTP_TOKEN (or pass --token), or listen on 127.0.0.1.`);
  }
  const sessions = new Map<string, Session>();
  // The 2026-07-28 leg: stateless, one McpServer per request.
  const modern = createMcpHandler(() => options.newServer(), { legacy: "reject", maxRequestBodySize: MAX_BODY });
  const serveModern = toNodeHandler(modern, { maxRequestBodySize: MAX_BODY });
  const ttl = options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  /** Initializes admitted but not yet given their session id: they hold a place under the cap. */
  let opening = 0;
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

  // Node checks the two timeouts every connectionsCheckingInterval (30 s by default): often enough
  // here for a bound of a few seconds to hold within a second.
  const server = createHttpServer(
    { requestTimeout, headersTimeout: Math.min(requestTimeout, MAX_HEADERS_TIMEOUT_MS), connectionsCheckingInterval: Math.min(1_000, requestTimeout / 4) },
    (req, res) => {
      responses.set(req.socket, res);
      res.once("finish", () => responses.delete(req.socket));
      void handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) json(res, 500, { jsonrpc: "2.0", error: { code: -32603, message: `Internal error: ${(error as Error).message}` }, id: null });
      });
    },
  );
  /** Each connection's current response: whether a timed-out request can still be answered. */
  const responses = new WeakMap<Socket, ServerResponse>();
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    // What Node answers by itself, with the 408 saying what the bound is and where it is set.
    if (socket.writable && !responses.get(socket)?.headersSent) {
      const body =
        error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? JSON.stringify({
              jsonrpc: "2.0",
              error: {
                code: -32000,
                message: `Request timeout: a request's headers and body must arrive within ${requestTimeout / 1000} s (OPENCODE_CONDUCTOR_HTTP_REQUEST_TIMEOUT_S); send the whole request at once`,
              },
              id: null,
            })
          : "";
      const status =
        error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? "408 Request Timeout"
          : error.code === "HPE_HEADER_OVERFLOW"
            ? "431 Request Header Fields Too Large"
            : "400 Bad Request";
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    } else socket.destroy();
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

    const body = req.method === "POST" ? await readJson(req, MAX_BODY) : undefined;
    if (body === TOO_LARGE) return tooLarge(req, res, MAX_BODY, "a request");
    // A 2025-11-25 session opens with a small initialize (a padded one is not even a valid request).
    if (!sessionId && (body as { method?: unknown } | undefined)?.method === "initialize" && bodySize.get(req)! > MAX_INIT_BODY) {
      return tooLarge(req, res, MAX_INIT_BODY, "a request before initialize");
    }
    if (!sessionId && req.method === "POST" && body !== undefined && !(await isLegacyRequest(webRequest(req, url), body, { maxRequestBodySize: MAX_BODY }))) {
      return serveModern(req, res, body);
    }
    if (sessionId || req.method !== "POST" || !isInitializeRequest(body)) {
      // Unknown session ids get 404 so that spec-following clients start a new session.
      return json(res, sessionId ? 404 : 400, {
        jsonrpc: "2.0",
        error: { code: -32000, message: sessionId ? "Unknown or expired MCP session: initialize again" : "Bad request: start with an initialize request" },
        id: null,
      });
    }
    if (sessions.size + opening >= maxSessions) return full(res);
    opening += 1;
    const events = new SessionEventStore({ ...DEFAULT_EVENT_BOUNDS, ...(options.maxEventBytes ? { maxBytes: options.maxEventBytes } : {}) });
    let admitted = false;
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // One store per session: cleared when the session is closed or expires.
      eventStore: events,
      retryInterval: RETRY_MS,
      onsessioninitialized: (id) => {
        opening -= 1;
        admitted = true;
        sessions.set(id, session);
      },
      onsessionclosed: (id) => void sessions.delete(id),
    });
    const session: Session = { transport, open: 0, idleSince: Date.now() };
    track(session, res);
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      events.clear();
    };
    try {
      await options.newServer().connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      // An initialize the SDK refused never got its id: its place goes back.
      if (!admitted) opening -= 1;
    }
  }

  /** 503 to an initialize past the cap: when a place may free up, and the three ways out. */
  function full(res: ServerResponse): void {
    const now = Date.now();
    const idle = [...sessions.values()].filter((s) => s.open === 0).map((s) => s.idleSince + ttl - now);
    const retryS = Math.max(1, Math.ceil((idle.length ? Math.min(...idle) : ttl) / 1000));
    res.setHeader("retry-after", String(retryS));
    json(res, 503, {
      jsonrpc: "2.0",
      error: {
        code: -32000,
        message:
          `Too many MCP sessions: ${maxSessions} are open, the most this server keeps (OPENCODE_CONDUCTOR_HTTP_MAX_SESSIONS). ` +
          `Close sessions you no longer use (DELETE /mcp with their Mcp-Session-Id), retry in ${retryS} s (a session unused for ${ttl / 1000} s is closed, OPENCODE_CONDUCTOR_HTTP_SESSION_TTL_S), ` +
          `or raise OPENCODE_CONDUCTOR_HTTP_MAX_SESSIONS. Clients of protocol 2026-07-28 keep no session and are not counted.`,
      },
      id: null,
    });
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
    notify: modern.notify,
    async close() {
      clearInterval(sweep);
      await Promise.all([modern.close().catch(() => undefined), ...[...sessions.values()].map((s) => s.transport.close().catch(() => undefined))]);
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
/** How many bytes each request's body had (read once, checked against two bounds). */
const bodySize = new WeakMap<IncomingMessage, number>();

/** The JSON body, undefined when it is not JSON, TOO_LARGE past `limit` (the rest is left unread). */
function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (value: unknown) => {
      if (settled) return;
      settled = true;
      bodySize.set(req, size);
      resolve(value);
    };
    req.on("data", (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
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

/** Answers 413, then closes the connection: the rest of the body is never read. */
function tooLarge(req: IncomingMessage, res: ServerResponse, limit: number, what: string): void {
  res.setHeader("connection", "close");
  res.once("finish", () => req.socket.destroy());
  json(res, 413, { jsonrpc: "2.0", error: { code: -32000, message: `Request body too large: ${what} may be at most ${limit} bytes` }, id: null });
}

/** The headers of a request as a web Request (the body is classified from the parsed value). */
function webRequest(req: IncomingMessage, url: URL): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  return new Request(url, { method: req.method, headers });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
