// Typed errors for every way a call to opencode can fail. Messages are written for a person (and a
// model reading a tool result): what failed, and what to do. They never contain the password.

export interface ErrorContext {
  operationId?: string;
  method?: string;
  /** Request URL without credentials (auth_token and userinfo are removed). */
  url?: string;
}

export class OpencodeError extends Error {
  override name = "OpencodeError";
  /** HTTP status, or 0 when no response arrived. */
  readonly status: number;
  readonly operationId: string | undefined;
  readonly method: string | undefined;
  readonly url: string | undefined;
  /** opencode's own error name (`NotFoundError`, `BadRequest`, `SessionBusyError`, …) when it sent one. */
  readonly serverName: string | undefined;
  /** The parsed error body, when there was one. */
  readonly body: unknown;

  constructor(message: string, status: number, context: ErrorContext = {}, extra: { serverName?: string; body?: unknown; cause?: unknown } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.status = status;
    this.operationId = context.operationId;
    this.method = context.method;
    this.url = context.url;
    this.serverName = extra.serverName;
    this.body = extra.body;
  }

  /** A compact, secret-free JSON form for logs and tool results. */
  toJSON(): Record<string, unknown> {
    return { name: this.name, message: this.message, status: this.status, operationId: this.operationId, serverName: this.serverName };
  }
}

/** No response: the server is down, refused the connection, or did not answer within the timeout. */
export class ConnectionError extends OpencodeError {
  override name = "ConnectionError";
  readonly reason: "unreachable" | "timeout";
  constructor(message: string, reason: "unreachable" | "timeout", context: ErrorContext, cause?: unknown) {
    super(message, 0, context, { cause });
    this.reason = reason;
  }
}

/** 401: wrong or missing password (or username). */
export class AuthError extends OpencodeError {
  override name = "AuthError";
}

/** 404: the session, message, permission request … does not exist. */
export class NotFoundError extends OpencodeError {
  override name = "NotFoundError";
}

/** 400: opencode rejected the input; `message` carries opencode's own explanation. */
export class BadRequestError extends OpencodeError {
  override name = "BadRequestError";
}

/** 409: e.g. `SessionBusyError` when reverting a busy session. */
export class ConflictError extends OpencodeError {
  override name = "ConflictError";
}

/** 5xx: opencode failed; `ref` is the id to look for in opencode's log. */
export class ServerError extends OpencodeError {
  override name = "ServerError";
  readonly ref: string | undefined;
  constructor(message: string, status: number, context: ErrorContext, extra: { serverName?: string; body?: unknown; ref?: string }) {
    super(message, status, context, extra);
    this.ref = extra.ref;
  }
}

/** What opencode says in an error body, across its two error shapes (v1 `{name,data}`, v2 `{_tag,message}`). */
export function describeErrorBody(body: unknown): { serverName?: string; message?: string; ref?: string } {
  if (!body || typeof body !== "object") return typeof body === "string" && body.trim() ? { message: body.trim() } : {};
  const b = body as Record<string, unknown>;
  const data = (b.data && typeof b.data === "object" ? b.data : {}) as Record<string, unknown>;
  const serverName = str(b.name) ?? str(b._tag);
  const message = str(data.message) ?? str(b.message) ?? messageFromIssues(b);
  const ref = str(data.ref) ?? str(b.ref);
  return { serverName, message, ref };
}

function messageFromIssues(b: Record<string, unknown>): string | undefined {
  // Some 400s carry validation issues instead of a message.
  const errors = b.errors ?? b.issues;
  if (!Array.isArray(errors) || errors.length === 0) return undefined;
  return errors.map((e) => (typeof e === "object" && e ? (str((e as Record<string, unknown>).message) ?? JSON.stringify(e)) : String(e))).join("; ");
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.length > 0 ? v : undefined;
}

/** Builds the right error class for an HTTP error response. */
export function errorForResponse(status: number, body: unknown, context: ErrorContext): OpencodeError {
  const { serverName, message, ref } = describeErrorBody(body);
  const what = `${context.operationId ?? context.method ?? "request"} failed with HTTP ${status}`;
  const extra = { serverName, body };
  if (status === 401 || status === 403) {
    return new AuthError(
      `${what}: opencode rejected the credentials. Check the password (OPENCODE_PASSWORD / OPENCODE_SERVER_PASSWORD) and the username (default "opencode").`,
      status,
      context,
      extra,
    );
  }
  const detail = message ? `: ${message}` : "";
  if (status === 413 || status === 414 || status === 431) {
    // The server refused the request's size before reading it: a value sent in the URL (an id, a
    // search, a directory, which travels as a header) or the body is far longer than any real one.
    const where = status === 413 ? "its body" : "its URL or headers (ids, searches and directories travel there)";
    return new BadRequestError(`${what}: the request was too large for opencode (${where}). A value is far too long: shorten it.`, status, context, extra);
  }
  if (status === 404) return new NotFoundError(`${what}${detail}`, status, context, extra);
  if (status === 400 || status === 422) return new BadRequestError(`${what}${detail}`, status, context, extra);
  if (status === 409) return new ConflictError(`${what}${detail}`, status, context, extra);
  if (status >= 500) {
    const hint = ref ? ` (opencode error ref ${ref}: look for it in opencode's log)` : "";
    return new ServerError(`${what}${detail}${hint}`, status, context, { ...extra, ref });
  }
  return new OpencodeError(`${what}${detail}`, status, context, extra);
}

/** Removes credentials from a URL so it can be shown. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    if (u.searchParams.has("auth_token")) u.searchParams.set("auth_token", "***");
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//");
  }
}

/**
 * Nothing listens on the server's port: the connection was refused (the process is gone). A hung
 * or cut-off server refuses nothing; its requests time out instead.
 */
export function connectionRefused(error: unknown): boolean {
  return hasCode(error, ["ECONNREFUSED"]);
}

/** The connection was accepted and then closed before any answer (the peer reset it, or closed it mid-request). */
export function connectionReset(error: unknown): boolean {
  return hasCode(error, ["ECONNRESET", "EPIPE", "UND_ERR_SOCKET"]);
}

function hasCode(error: unknown, codes: readonly string[]): boolean {
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (codes.includes((e as { code?: unknown }).code as string)) return true;
  }
  return false;
}
