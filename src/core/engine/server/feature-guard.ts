// Feature detection: before a request leaves, check that the connected opencode has the operation
// (its own spec, see server/spec.ts) and is not a release on which the compatibility matrix found
// the operation misbehaving. Either way the caller gets one clear error naming the server's version
// and the first tested release that works, instead of a 404, an HTML page or a hang.
import type { Middleware } from "openapi-fetch";
import { operations, specInfo } from "../../../../generated/operations.js";
import type { OpencodeClient } from "../../../client/connect.js";
import { OpencodeError } from "../../../client/errors.js";
import { compareVersions, firstTestedWith } from "./compatibility.js";
import { serverSpec, V1_PIN, type ServerSpec, type ServerSpecOptions } from "./spec.js";

/** The server lacks an operation (or the matrix found it broken there); nothing was sent. */
export class UnsupportedOperationError extends OpencodeError {
  override name = "UnsupportedOperationError";
  readonly serverVersion: string;
  /** The oldest tested release where it works, when known. */
  readonly since: string | undefined;
  constructor(message: string, op: { id: string; method: string; path: string }, serverVersion: string, since: string | undefined) {
    super(message, 0, { operationId: op.id, method: op.method.toUpperCase(), url: op.path });
    this.serverVersion = serverVersion;
    this.since = since;
  }
}

/** Behaviour the matrix found wrong on older releases, though the operation exists there. */
export interface BehaviourLimit {
  operationId: string;
  /** The oldest tested release where it works. */
  since: string;
  /** What goes wrong before `since`. */
  problem: string;
}

export const BEHAVIOUR_LIMITS: readonly BehaviourLimit[] = [
  // Seen on 1.1.65 and 1.3.2: the turn's user message keeps `summary.diffs: []` and session.diff
  // answers [] (with or without messageID) after the turn wrote a file.
  {
    operationId: "session.diff",
    since: "1.14.48",
    problem: "opencode records no per-turn diff there, so it would answer no files changed even after a turn wrote files",
  },
  // Seen on 1.3.2: session.revert answers with `revert` set, and the file the turn wrote stays.
  { operationId: "session.revert", since: "1.14.48", problem: "opencode marks the messages reverted there but leaves the files the turn wrote as they are" },
];

const upgrade = `Upgrade opencode (e.g. \`npm i -g opencode-ai@${specInfo.opencodeVersion}\`); the server status shows the tested range.`;

/** Why `op` cannot be used on this server, or undefined when it can. */
export function unsupported(spec: ServerSpec, op: { id: string; method: string; path: string }): UnsupportedOperationError | undefined {
  const route = `${op.id} (${op.method.toUpperCase()} ${op.path})`;
  if (spec.pin !== V1_PIN) {
    // A 2.x server (measured against the 2.x pin): a 1.x operation is there only where the server
    // serves its route, and 2.x serves only /api/…; upgrading to a 1.x release is no advice.
    const served = [...spec.operations.values()].some((o) => o.method === op.method && o.path === op.path);
    if (served) return undefined;
    return new UnsupportedOperationError(
      `opencode ${spec.version} has no operation ${route}, so nothing was sent: it speaks only the v2 API (opencode 2.x, routes under /api). oc_api_ops lists its operations; the conductor's tools work on it as on 1.x.`,
      op,
      spec.version,
      undefined,
    );
  }
  if (!spec.has(op.id)) {
    const first = firstTestedWith(op.id);
    const since = first && first !== "none" ? first : undefined;
    const where = since ? `The oldest tested opencode release that has it is ${since}.` : first === "none" ? "No tested opencode release has it." : "";
    return new UnsupportedOperationError(
      `opencode ${spec.version} has no operation ${route}, so nothing was sent. ${where} ${upgrade}`.replace(/\s+/g, " "),
      op,
      spec.version,
      since,
    );
  }
  const limit = BEHAVIOUR_LIMITS.find((l) => l.operationId === op.id && /^\d+\.\d+\.\d+/.test(spec.version) && compareVersions(spec.version, l.since) < 0);
  if (limit) {
    return new UnsupportedOperationError(
      `${route} does not work on opencode ${spec.version}: ${limit.problem} (compatibility matrix). It works from opencode ${limit.since}. ${upgrade}`,
      op,
      spec.version,
      limit.since,
    );
  }
  return undefined;
}

const byRoute = new Map(Object.values(operations).map((op) => [`${op.method.toUpperCase()} ${op.path}`, op]));
// Reading the spec itself must not wait for the spec.
const UNGUARDED = new Set(["/global/health", "/doc"]);
const guarded = new WeakMap<object, ServerSpecOptions>();

/** The spec options of a client whose requests are checked (guardFeatures), else undefined. */
export function featureDetection(client: OpencodeClient): ServerSpecOptions | undefined {
  return guarded.get(client.raw);
}

/**
 * Checks every request of `client` (and of its withDirectory() copies) against the server's own
 * spec. The first request waits for the spec (one health request, plus `GET /doc` when the state
 * dir has no copy for this version); if the spec cannot be read, requests go through unchecked.
 */
export function guardFeatures(client: OpencodeClient, options: ServerSpecOptions = {}): void {
  if (guarded.has(client.raw)) return;
  guarded.set(client.raw, options);
  const middleware: Middleware = {
    async onRequest({ request, schemaPath }) {
      if (UNGUARDED.has(schemaPath)) return undefined;
      const op = byRoute.get(`${request.method} ${schemaPath}`);
      if (!op) return undefined; // not a pinned operation: oc_api checked it against the live spec
      const spec = await serverSpec(client, options).catch(() => undefined);
      const refusal = spec && unsupported(spec, op);
      if (refusal) throw refusal;
      return undefined;
    },
  };
  client.raw.use(middleware);
}
