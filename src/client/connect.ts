// `connect()`: a typed client for one opencode 1.x server. Every call goes through openapi-fetch
// (request.ts) with the operation's method and path taken from the generated operation table, so no
// URL is built by hand. opencode 2.x: see v2/client.ts.
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "../../generated/openapi.js";
import { operations, type OperationSpec } from "../../generated/operations.js";
import { OpencodeError, safeUrl } from "./errors.js";
import { streamEvents, type EventsOptions } from "./event-stream.js";
import { performRequest, type RequestContext, type RouteSpec } from "./request.js";
import { refuseOversizedRequests } from "./request-size.js";
import type { CallParams, CallResult, DisconnectedEvent, OpencodeEvent, OperationId, ReconnectedEvent } from "./types.js";

export interface ConnectOptions {
  /** Base URL of the opencode server, e.g. `http://127.0.0.1:4096`. */
  url: string;
  /** The server password (`OPENCODE_SERVER_PASSWORD`); omit for an unsecured server. */
  password?: string;
  /** Basic-auth user; default `opencode`. */
  username?: string;
  /** Project directory sent with every operation that takes `directory`. */
  directory?: string;
  /** fetch implementation; default: the global fetch at call time (so msw and similar can intercept). */
  fetch?: (request: Request) => Promise<Response>;
  /** Timeout (ms) for a response to start arriving; default 30 000. */
  timeoutMs?: number;
}

export interface OpencodeClient {
  readonly url: string;
  readonly directory: string | undefined;
  /** Calls an operation by its opencode id, e.g. `call("session.get", { path: { sessionID } })`. */
  call<Id extends OperationId>(id: Id, ...params: CallParams<Id>): Promise<CallResult<Id>>;
  /** Every server event (`GET /global/event`), reconnecting when the stream drops. */
  events(options?: EventsOptions): AsyncGenerator<OpencodeEvent | ReconnectedEvent | DisconnectedEvent>;
  /** The plain openapi-fetch client (paths API), with auth already set. */
  readonly raw: Client<paths>;
  /** A copy bound to another project directory. */
  withDirectory(directory: string | undefined): OpencodeClient;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export function connect(options: ConnectOptions): OpencodeClient {
  const { baseUrl, username, password } = splitCredentials(options);
  const headers: Record<string, string> = {};
  if (password !== undefined) {
    headers.authorization = `Basic ${Buffer.from(`${username ?? "opencode"}:${password}`).toString("base64")}`;
  }
  const fetchImpl = refuseOversizedRequests(options.fetch ?? ((request: Request) => globalThis.fetch(request)));
  const raw = createClient<paths>({ baseUrl, headers, fetch: fetchImpl });
  return makeClient(raw, baseUrl, options.directory, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
}

/** Credentials may come in the URL (`http://user:pass@host`); they move to the auth header. */
export function splitCredentials(options: ConnectOptions): { baseUrl: string; username?: string; password?: string } {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    url = new URL("invalid:"); // fall through to the error below
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new OpencodeError(`Invalid opencode URL "${safeUrl(options.url)}": expected http://host:port.`, 0);
  }
  const username = options.username ?? (url.username ? decodeURIComponent(url.username) : undefined);
  const password = options.password ?? (url.password ? decodeURIComponent(url.password) : undefined);
  url.username = "";
  url.password = "";
  return { baseUrl: url.toString().replace(/\/+$/, ""), username, password };
}

function makeClient(raw: Client<paths>, baseUrl: string, directory: string | undefined, defaultTimeoutMs: number): OpencodeClient {
  const ctx: RequestContext = { raw, baseUrl, directory, defaultTimeoutMs };

  async function call(id: string, args: Record<string, unknown> = {}, callOptions: Record<string, unknown> = {}): Promise<unknown> {
    const op = operations[id as OperationId];
    if (!op) throw new OpencodeError(`Unknown opencode operation "${id}". See generated/operations.ts for the operation ids.`, 0);
    return performRequest(ctx, routeOf(op), args, callOptions);
  }

  const client: OpencodeClient = {
    url: baseUrl,
    directory,
    call: call as OpencodeClient["call"],
    events: (options) => streamEvents((signal) => client.call("global.event", {}, { signal }), options),
    raw,
    withDirectory: (dir) => makeClient(raw, baseUrl, dir, defaultTimeoutMs),
  };
  return client;
}

/** The generated table's row, as the request executor needs it. */
function routeOf(op: OperationSpec): RouteSpec {
  return {
    id: op.id,
    method: op.method,
    path: op.path,
    streaming: op.streaming,
    takesDirectory: Boolean((op.query?.properties as Record<string, unknown> | undefined)?.directory),
    successContentType: op.responses.find((r) => r.status.startsWith("2") && r.contentType)?.contentType ?? null,
  };
}
