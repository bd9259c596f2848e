// The operations oc_api_ops lists and oc_api validates against: the pinned table (generated/), or,
// when the connected opencode serves another spec, that server's own operations. A server catalog
// is built from the fetched document with codegen's own row builder: the cheap fields (id, method,
// path, texts, flags) at once, the bundled schemas per operation on first use.
import { HTTP_METHODS, operationHead, operationRow, type OperationHead } from "../../openapi/operation-row.js";
import { operations, specInfo, type OperationSpec } from "../../../generated/operations.js";
import { featureDetection } from "../../core/engine/server/feature-guard.js";
import { loadV2Pin, serverSpec, specFromDocument, type ServerSpec } from "../../core/engine/server/spec.js";
import type { ToolContext } from "../tool-def.js";

/** An operation of either catalog: ids of a server's spec are not limited to the pinned ones. */
export type ApiOperation = Omit<OperationSpec, "id"> & { id: string };
export type ApiHead = Pick<ApiOperation, keyof OperationHead>;

export interface ApiCatalog {
  /** "pinned", or the server spec's sha256: a cache key for compiled validators. */
  key: string;
  /** Whose operations these are: the pin's, or the connected server's version. */
  source: "pinned" | "server";
  version: string;
  heads: readonly ApiHead[];
  byId(id: string): ApiHead | undefined;
  /** The operation with its bundled schemas (built once). */
  full(head: ApiHead): ApiOperation;
  /** The server's spec, for a server catalog. */
  spec?: ServerSpec;
}

const pinnedOps = Object.values(operations) as ApiOperation[];
const pinnedById = new Map(pinnedOps.map((op) => [op.id, op]));

export const PINNED_CATALOG: ApiCatalog = {
  key: "pinned",
  source: "pinned",
  version: specInfo.opencodeVersion,
  heads: pinnedOps,
  byId: (id) => pinnedById.get(id),
  full: (head) => pinnedById.get(head.id) ?? (head as ApiOperation),
};

/** The pinned operation with this id, whatever catalog is in use (to explain a removed one). */
export const pinnedOperation = (id: string): ApiOperation | undefined => pinnedById.get(id);

const CALLABLE = new Set<string>(HTTP_METHODS);
// A few specs at most are in use at once (one per opencode version connected to).
const serverCatalogs = new Map<string, ApiCatalog>();

export function serverCatalog(spec: ServerSpec): ApiCatalog {
  const hit = serverCatalogs.get(spec.sha256);
  if (hit) return hit;
  const heads = [...spec.operations.values()].filter((op) => CALLABLE.has(op.method)).map((op) => operationHead(op) as ApiHead);
  const byId = new Map(heads.map((h) => [h.id, h]));
  const built = new Map<string, ApiOperation>();
  const catalog: ApiCatalog = {
    key: spec.sha256,
    source: "server",
    version: spec.version,
    heads,
    byId: (id) => byId.get(id),
    full(head) {
      let op = built.get(head.id);
      if (!op) built.set(head.id, (op = operationRow(spec.doc, spec.operations.get(head.id)!) as ApiOperation));
      return op;
    },
    spec,
  };
  if (serverCatalogs.size >= 4) serverCatalogs.delete(serverCatalogs.keys().next().value!);
  serverCatalogs.set(spec.sha256, catalog);
  return catalog;
}

/**
 * The catalog for this call: the connected server's own when feature detection is on for its
 * connection and its spec differs from the pin; else the pinned one (also when not connected).
 */
export async function catalogFor(ctx: Pick<ToolContext, "conductor">): Promise<ApiCatalog> {
  const conductor = await ctx.conductor().catch(() => undefined);
  // opencode 2.x: its own v2 document, which the engine read when it connected (measured against
  // the 2.x pin, so a 1.x operation asked for is explained as such: feature-guard.ts).
  const v2 = await conductor?.engine.openApi().catch(() => undefined);
  if (v2) return serverCatalog(await specFromDocument(v2.version, v2.sha256, v2.doc, await loadV2Pin()));
  const options = conductor && featureDetection(conductor.client);
  if (!conductor || !options) return PINNED_CATALOG;
  const spec = await serverSpec(conductor.client, options).catch(() => undefined);
  return !spec || spec.pinned ? PINNED_CATALOG : serverCatalog(spec);
}
