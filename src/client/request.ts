// One call of one opencode operation over openapi-fetch, for both API generations: the method and
// path come from a route table (generated/operations.ts for 1.x, the v2 route adapter for 2.x), so
// no URL is built by hand. Adds the project directory where the operation takes one, a timeout for
// the response headers, the caller's abort signal (kept for a stream's lifetime), and turns every
// failure into one of the typed errors of errors.ts.
import type { Client } from "openapi-fetch";
import { ConnectionError, errorForResponse, OpencodeError, safeUrl, type ErrorContext } from "./errors.js";

/** What a call needs to know about an operation. */
export interface RouteSpec {
  id: string;
  method: string;
  path: string;
  streaming: boolean;
  /** Whether the operation takes a `directory` query parameter. */
  takesDirectory: boolean;
  /** Content type of the first 2xx response with a body, if any. */
  successContentType: string | null;
}

export interface RequestArgs {
  path?: unknown;
  query?: Record<string, unknown>;
  body?: unknown;
}

export interface RequestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  directory?: string;
}

export interface RequestContext {
  /** An openapi-fetch client of either API's paths; its `request` is used loosely (method and path known at run time). */
  raw: Pick<Client<never>, "request"> | { request: unknown };
  baseUrl: string;
  directory: string | undefined;
  defaultTimeoutMs: number;
}

type LooseRequest = (method: string, path: string, init: Record<string, unknown>) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export async function performRequest(ctx: RequestContext, op: RouteSpec, args: RequestArgs = {}, callOptions: RequestOptions = {}): Promise<unknown> {
  const request = ctx.raw.request as unknown as LooseRequest;
  const { baseUrl } = ctx;
  const context: ErrorContext = { operationId: op.id, method: op.method.toUpperCase(), url: safeUrl(baseUrl + op.path) };
  const dir = callOptions.directory ?? ctx.directory;
  const query = { ...args.query };
  if (dir !== undefined && op.takesDirectory && query.directory === undefined) query.directory = dir;

  const timeoutMs = callOptions.timeoutMs ?? ctx.defaultTimeoutMs;
  const controller = new AbortController();
  const outer = callOptions.signal;
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

/** How to read the success body: most operations answer JSON, a few text, bytes or a stream. */
function parseAsFor(op: RouteSpec): "json" | "text" | "blob" | "stream" {
  if (op.streaming) return "stream";
  const type = op.successContentType ?? "application/json";
  if (type.includes("json")) return "json";
  return type.startsWith("text/") ? "text" : "blob";
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
