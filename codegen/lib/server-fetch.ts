// Reading an opencode server's own OpenAPI document and version, for either major: the server is
// identified by src/client/detect.ts (1.x: /global/health and /doc; 2.x: /api/info or /api/health
// and /openapi.json). Requests are retried: one that lands while the server is still starting may
// never be answered (docs/opencode-behaviour.md §0.2). The password only ever goes into the Authorization header.
import { detectServer, fetchServerSpec, type OpencodeMajor, type ServerTarget } from "../../src/client/detect.js";
import { AuthError, ConnectionError, OpencodeError } from "../../src/client/errors.js";

export type { ServerTarget };

export interface FetchedSpec {
  /** The OpenAPI document exactly as served. */
  doc: Buffer;
  /** What the server reports as its version. */
  version: string;
  major: OpencodeMajor;
  /** The route the document came from (`/doc` on 1.x, `/openapi.json` on 2.x). */
  specPath: string;
}

export interface RetryOptions {
  attempts?: number;
  timeoutMs?: number;
  delayMs?: number;
}

export async function fetchSpecFrom(target: ServerTarget, retry: RetryOptions = {}): Promise<FetchedSpec> {
  const { attempts = 5, timeoutMs = 2_000, delayMs = 250 } = retry;
  const probeTarget = { ...target, timeoutMs: target.timeoutMs ?? timeoutMs };
  let last: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const identity = await detectServer(probeTarget);
      const { bytes } = await fetchServerSpec(probeTarget, identity);
      return { doc: bytes, version: identity.version, major: identity.major, specPath: identity.specPath };
    } catch (error) {
      if (error instanceof AuthError) throw new Error("the server answered 401: missing or wrong password (--password or OPENCODE_PASSWORD)", { cause: error });
      last = error;
      // Only a server that did not answer, or answered 5xx, may do better on a retry.
      const retryable = error instanceof ConnectionError || (error instanceof OpencodeError && error.status >= 500);
      if (!retryable) break;
    }
    if (attempt < attempts) await new Promise((r) => setTimeout(r, delayMs));
  }
  throw new Error(`reading the spec of ${target.url} failed: ${last instanceof Error ? last.message : String(last)}`);
}
