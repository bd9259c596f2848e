// `connect()`: a typed client for one opencode server. Every call goes through openapi-fetch with
// the operation's method and path taken from the generated operation table, so no URL is built by hand.
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "../../generated/openapi.js";
import { operations, type OperationSpec } from "../../generated/operations.js";
import { ConnectionError, errorForResponse, OpencodeError, safeUrl, type ErrorContext } from "./errors.js";
import { streamEvents, type EventsOptions } from "./events.js";
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
  const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const raw = createClient<paths>({ baseUrl, headers, fetch: fetchImpl });
  return makeClient(raw, baseUrl, options.directory, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
}

/** Credentials may come in the URL (`http://user:pass@host`); they move to the auth header. */
function splitCredentials(options: ConnectOptions): { baseUrl: string; username?: string; password?: string } {
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

// openapi-fetch's `request` typed loosely: method and path come from our table at run time.
type LooseRequest = (
  method: string,
  path: string,
  init: Record<string, unknown>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

function makeClient(raw: Client<paths>, baseUrl: string, directory: string | undefined, defaultTimeoutMs: number): OpencodeClient {
  const request = raw.request as unknown as LooseRequest;

  async function call(id: string, args: Record<string, unknown> = {}, callOptions: Record<string, unknown> = {}): Promise<unknown> {
    const op = operations[id as OperationId];
    if (!op) throw new OpencodeError(`Unknown opencode operation "${id}". List operations with oc_api_ops or see generated/operations.ts.`, 0);
    const context: ErrorContext = { operationId: op.id, method: op.method.toUpperCase(), url: safeUrl(baseUrl + op.path) };
    const dir = (callOptions.directory as string | undefined) ?? directory;
    const query = { ...(args.query as Record<string, unknown> | undefined) };
    const takesDirectory = Boolean((op.query?.properties as Record<string, unknown> | undefined)?.directory);
    if (dir !== undefined && takesDirectory && query.directory === undefined) query.directory = dir;

    const timeoutMs = (callOptions.timeoutMs as number | undefined) ?? defaultTimeoutMs;
    const controller = new AbortController();
    const outer = callOptions.signal as AbortSignal | undefined;
    const onOuterAbort = () => controller.abort(outer?.reason);
    if (outer?.aborted) onOuterAbort();
    outer?.addEventListener("abort", onOuterAbort, { once: true });
    let keepListening = false; // a stream stays tied to the caller's signal after the headers
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error("timeout"));
    }, timeoutMs);

    try {
      const { data, error, response } = await request(op.method.toUpperCase(), op.path, {
        params: { path: args.path, query },
        body: args.body,
        signal: controller.signal,
        parseAs: parseAsFor(op),
      });
      if (!response.ok) throw errorForResponse(response.status, error, context);
      keepListening = op.streaming;
      return data;
    } catch (error) {
      if (error instanceof OpencodeError) throw error;
      if (outer?.aborted) throw outer.reason ?? error;
      if (error instanceof SyntaxError) {
        throw new OpencodeError(`opencode answered ${op.id} with a body that is not valid JSON: ${error.message}`, 0, context, { cause: error });
      }
      if (timedOut) {
        throw new ConnectionError(
          `opencode at ${safeUrl(baseUrl)} did not answer ${op.id} within ${timeoutMs} ms. Check that the server is healthy, or raise timeoutMs.`,
          "timeout",
          context,
          error,
        );
      }
      throw new ConnectionError(
        `Cannot reach opencode at ${safeUrl(baseUrl)} (${networkReason(error)}). Is it running? Start one with \`opencode serve --port 4096\` or set OPENCODE_URL.`,
        "unreachable",
        context,
        error,
      );
    } finally {
      clearTimeout(timer);
      if (!keepListening) outer?.removeEventListener("abort", onOuterAbort);
    }
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

/** How to read the success body: most operations answer JSON, a few text, bytes or a stream. */
function parseAsFor(op: OperationSpec): "json" | "text" | "blob" | "stream" {
  if (op.streaming) return "stream";
  const type = op.responses.find((r) => r.status.startsWith("2") && r.contentType)?.contentType ?? "application/json";
  if (type.includes("json")) return "json";
  return type.startsWith("text/") ? "text" : "blob";
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
