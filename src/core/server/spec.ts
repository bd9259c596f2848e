// The connected server's own API: its version (`GET /global/health`) and OpenAPI document
// (`GET /doc`), read once per client and cached on disk per opencode version in the state dir
// (`opencode-specs/<version>.json`), so a restart of the conductor costs one health request.
// What it lacks or adds relative to the pinned spec drives feature detection and oc_api.
import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { listOperations, type OpenApiDocument, type SpecOperation } from "../../../codegen/lib/spec.js";
import { operations, specInfo } from "../../../generated/operations.js";
import type { OpencodeClient } from "../../client/connect.js";
import { readJson, writeJsonAtomic } from "../state-dir.js";

export interface ServerSpec {
  version: string;
  sha256: string;
  /** True when the server serves the pinned spec byte for byte. */
  pinned: boolean;
  doc: OpenApiDocument;
  /** The server's operations by id (no schemas bundled: cheap to build). */
  operations: ReadonlyMap<string, SpecOperation>;
  /** Pinned operations this server lacks, and operations it has that the pin does not. */
  missing: string[];
  extra: string[];
  /** True when the server has `operationId`, or serves the same method and path. */
  has(operationId: string): boolean;
}

interface CacheFile {
  version: string;
  sha256: string;
  fetchedAt: string;
  doc: OpenApiDocument;
}

export interface ServerSpecOptions {
  /** Where `opencode-specs/` lives; without it the spec is cached in memory only. */
  stateDir?: string;
  timeoutMs?: number;
}

type LooseRequest = (method: string, path: string, init: Record<string, unknown>) => Promise<{ data?: unknown; response: Response }>;

// Keyed by the openapi-fetch client, which every withDirectory() copy shares.
const bySpecClient = new WeakMap<object, Promise<ServerSpec>>();

/** How long a failed read is remembered, so that a server without /doc costs one try a minute, not one per request. */
const RETRY_AFTER_MS = 60_000;

/** The server's spec, read once per client (after a failure, again a minute later). */
export function serverSpec(client: OpencodeClient, options: ServerSpecOptions = {}): Promise<ServerSpec> {
  let pending = bySpecClient.get(client.raw);
  if (!pending) {
    const attempt = readServerSpec(client, options);
    bySpecClient.set(client.raw, (pending = attempt));
    attempt.catch(() => setTimeout(() => bySpecClient.get(client.raw) === attempt && bySpecClient.delete(client.raw), RETRY_AFTER_MS).unref());
  }
  return pending;
}

/** The spec already read for this client, if any (never starts a request). */
export async function knownServerSpec(client: OpencodeClient): Promise<ServerSpec | undefined> {
  return bySpecClient.get(client.raw)?.catch(() => undefined);
}

async function readServerSpec(client: OpencodeClient, options: ServerSpecOptions): Promise<ServerSpec> {
  const { version } = await client.call("global.health", {}, { timeoutMs: options.timeoutMs ?? 10_000 });
  const cacheFile = options.stateDir ? join(options.stateDir, "opencode-specs", `${version.replace(/[^\w.-]/g, "_")}.json`) : undefined;
  const cached = cacheFile ? await readJson<CacheFile | null>(cacheFile, null).catch(() => null) : null;
  if (cached && cached.version === version && cached.doc?.paths) return build(version, cached.sha256, cached.doc);

  const request = client.raw.request as unknown as LooseRequest;
  const { response } = await request("get", "/doc", { parseAs: "stream", signal: AbortSignal.timeout(options.timeoutMs ?? 10_000) });
  const bytes = Buffer.from(await response.arrayBuffer());
  if (!response.ok) throw new Error(`GET /doc answered HTTP ${response.status}`);
  await yieldToLoop();
  const doc = JSON.parse(bytes.toString("utf8")) as OpenApiDocument;
  await yieldToLoop();
  if (!doc || typeof doc.paths !== "object") throw new Error("GET /doc did not return an OpenAPI document");
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  if (cacheFile && options.stateDir) {
    await mkdir(join(options.stateDir, "opencode-specs"), { recursive: true, mode: 0o700 });
    await writeJsonAtomic(cacheFile, { version, sha256, fetchedAt: new Date().toISOString(), doc } satisfies CacheFile).catch(() => undefined);
  }
  return build(version, sha256, doc);
}

const PINNED_IDS = Object.keys(operations);

// Each step over a ~480 KB document takes ~10 ms: between steps other work gets its turn.
const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

/** A ServerSpec of a document already read (the v2 engine holds its server's). */
export const specFromDocument = (version: string, sha256: string, doc: unknown): Promise<ServerSpec> => build(version, sha256, doc as OpenApiDocument);

async function build(version: string, sha256: string, doc: OpenApiDocument): Promise<ServerSpec> {
  await yieldToLoop();
  const ops = new Map(listOperations(doc).map((op) => [op.id, op]));
  await yieldToLoop();
  const routes = new Set([...ops.values()].map((op) => `${op.method} ${op.path}`));
  const has = (id: string) => {
    if (ops.has(id)) return true;
    const pinned = operations[id as keyof typeof operations];
    return pinned !== undefined && routes.has(`${pinned.method} ${pinned.path}`);
  };
  return {
    version,
    sha256,
    pinned: sha256 === specInfo.sha256,
    doc,
    operations: ops,
    missing: PINNED_IDS.filter((id) => !has(id)),
    extra: [...ops.keys()].filter((id) => !(id in operations)),
    has,
  };
}
