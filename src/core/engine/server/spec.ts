// The connected server's own API: its version (`GET /global/health`) and OpenAPI document
// (`GET /doc`), read once per client and cached on disk per opencode version in the state dir
// (`opencode-specs/<version>.json`), so a restart of the conductor costs one health request.
// What it lacks or adds relative to the pinned spec drives feature detection and oc_api. A 2.x
// server is compared with the vendored 2.x spec instead (spec/v2/, generated/v2/): SpecPin says
// which one a ServerSpec was measured against.
import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { listOperations, type OpenApiDocument, type SpecOperation } from "../../../openapi/spec.js";
import { operations, specInfo, type OperationSpec } from "../../../../generated/operations.js";
import type { OpencodeClient } from "../../../client/connect.js";
import { readJson, writeJsonAtomic } from "../../state-dir.js";

/** What a pinned operation is compared by (spec-changes.ts); the 1.x and 2.x rows share the shape. */
export type PinnedRow = Pick<OperationSpec, "method" | "path" | "pathParams" | "query" | "body" | "bodyRequired" | "responses">;

/** A vendored spec a server's own document is measured against. */
export interface SpecPin {
  /** The opencode version the vendored spec is from. */
  version: string;
  sha256: string;
  rows: Readonly<Record<string, PinnedRow>>;
  /** The pin's id for a server's operationId (identity for 1.x; see V2_PIN_PREFIX). */
  key(id: string): string;
  /**
   * A pinned operation also counts as present where the server serves its method and path under
   * another id (1.x releases renamed a few; feature detection asks "can it be called"). 2.x matches
   * by id only, as `npm run spec:diff -- --ignore-prefix v2.` and the compatibility matrix count it:
   * its route adapter, not this list, decides what the v2 engine calls.
   */
  byRoute: boolean;
}

/** 1.x: the spec the SDK is generated from (spec/openapi.json). */
export const V1_PIN: SpecPin = { version: specInfo.opencodeVersion, sha256: specInfo.sha256, rows: operations, key: (id) => id, byRoute: true };

/**
 * The 2.x pre-release names its operations `v2.session.create`, the released 2.0.x (the 2.x pin)
 * `session.create`: the prefix is dropped before matching, as `npm run spec:diff -- --ignore-prefix v2.` does.
 */
export const V2_PIN_PREFIX = "v2.";

let v2Pin: Promise<SpecPin> | undefined;

/** 2.x: spec/v2/openapi.json (generated/v2/), loaded on first use so 1.x users never parse it. */
export function loadV2Pin(): Promise<SpecPin> {
  return (v2Pin ??= import("../../../../generated/v2/operations.js").then(({ operations: rows, specInfo: info }) => ({
    version: info.opencodeVersion,
    sha256: info.sha256,
    rows,
    key: (id: string) => (id.startsWith(V2_PIN_PREFIX) ? id.slice(V2_PIN_PREFIX.length) : id),
    byRoute: false,
  })));
}

export interface ServerSpec {
  version: string;
  sha256: string;
  /** The vendored spec this one was measured against. */
  pin: SpecPin;
  /** True when the server serves the pinned spec byte for byte. */
  pinned: boolean;
  doc: OpenApiDocument;
  /** The server's operations by id (no schemas bundled: cheap to build). */
  operations: ReadonlyMap<string, SpecOperation>;
  /** Pinned operations this server lacks, and operations it has that the pin does not (server ids). */
  missing: string[];
  extra: string[];
  /** True when the server has the pinned `operationId` (or, where the pin matches `byRoute`, serves its method and path). */
  has(operationId: string): boolean;
  /** The pinned row a server operation is compared with, when the pin has one of that id. */
  pinnedRow(serverId: string): PinnedRow | undefined;
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

// Each step over a ~480 KB document takes ~10 ms: between steps other work gets its turn.
const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

/** A ServerSpec of a document already read (the v2 engine holds its server's; measure it with loadV2Pin()). */
export const specFromDocument = (version: string, sha256: string, doc: unknown, pin: SpecPin = V1_PIN): Promise<ServerSpec> =>
  build(version, sha256, doc as OpenApiDocument, pin);

async function build(version: string, sha256: string, doc: OpenApiDocument, pin: SpecPin = V1_PIN): Promise<ServerSpec> {
  await yieldToLoop();
  const ops = new Map(listOperations(doc).map((op) => [op.id, op]));
  const keyed = new Set([...ops.keys()].map(pin.key));
  await yieldToLoop();
  const routes = new Set([...ops.values()].map((op) => `${op.method} ${op.path}`));
  const has = (id: string) => {
    if (keyed.has(id)) return true;
    const pinned = pin.rows[id];
    return pin.byRoute && pinned !== undefined && routes.has(`${pinned.method} ${pinned.path}`);
  };
  return {
    version,
    sha256,
    pin,
    pinned: sha256 === pin.sha256,
    doc,
    operations: ops,
    missing: Object.keys(pin.rows).filter((id) => !has(id)),
    extra: [...ops.keys()].filter((id) => !(pin.key(id) in pin.rows)),
    has,
    pinnedRow: (serverId) => pin.rows[pin.key(serverId)],
  };
}
