// Reading GET /doc and GET /global/health from an opencode server. Every request has a short
// timeout and is retried: a request that lands while the server is still starting may never be
// answered (docs/opencode-behaviour.md §0.2). The password only ever goes into the Authorization header.

export interface ServerTarget {
  url: string;
  username?: string;
  password?: string;
}

export interface FetchedSpec {
  /** GET /doc exactly as served. */
  doc: Buffer;
  /** `version` from GET /global/health. */
  version: string;
}

export interface RetryOptions {
  attempts?: number;
  timeoutMs?: number;
  delayMs?: number;
}

export async function fetchSpecFrom(target: ServerTarget, retry: RetryOptions = {}): Promise<FetchedSpec> {
  const health = JSON.parse((await getWithRetry(target, "/global/health", retry)).toString("utf8")) as {
    version?: unknown;
  };
  if (typeof health.version !== "string") throw new Error("GET /global/health did not report a version");
  const doc = await getWithRetry(target, "/doc", retry);
  return { doc, version: health.version };
}

export async function getWithRetry(target: ServerTarget, path: string, retry: RetryOptions = {}): Promise<Buffer> {
  const { attempts = 5, timeoutMs = 2_000, delayMs = 250 } = retry;
  const url = `${target.url.replace(/\/+$/, "")}${path}`;
  const headers: Record<string, string> = { accept: "application/json" };
  if (target.password !== undefined) {
    const credentials = `${target.username ?? "opencode"}:${target.password}`;
    headers.authorization = `Basic ${Buffer.from(credentials).toString("base64")}`;
  }
  let last = "";
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
      const body = Buffer.from(await response.arrayBuffer());
      if (response.ok) return body;
      if (response.status === 401) {
        throw new FatalError(`GET ${path} answered 401: missing or wrong password (--password or OPENCODE_PASSWORD)`);
      }
      last = `HTTP ${response.status}`;
      if (response.status < 500) break; // a 4xx will not change on retry
    } catch (error) {
      if (error instanceof FatalError) throw error;
      last = describe(error);
    }
    if (attempt < attempts) await new Promise((r) => setTimeout(r, delayMs));
  }
  throw new Error(`GET ${url} failed: ${last}`);
}

class FatalError extends Error {}

function describe(error: unknown): string {
  if (error instanceof Error && error.name === "TimeoutError") return "no answer within the timeout";
  // fetch() hides the reason (ECONNREFUSED, bad port...) in `cause`.
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
