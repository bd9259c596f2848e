// Finding opencode's HTTP operations for oc_api and oc_api_ops: an id or "METHOD /path" to an
// operation, close matches for a wrong name, and a search, so both tools name operations the same
// way. Every text input is bounded first: a long one would otherwise keep the event loop busy for seconds.
import { quoted, UsageError } from "../../core/errors.js";
import { unsupported } from "../../core/engine/server/feature-guard.js";
import { PINNED_CATALOG, type ApiCatalog, type ApiHead } from "./catalog.js";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

export type Access = "read" | "write";
export const accessOf = (op: Pick<ApiHead, "readOnly">): Access => (op.readOnly ? "read" : "write");
export const methodOf = (op: Pick<ApiHead, "method">): string => op.method.toUpperCase();

/** Longest `search` looked at, and longest operation reference (`id` or `METHOD /path`). */
export const MAX_SEARCH = 200;
export const MAX_REF = 300;

/** A clear error for a text argument that is too long, quoting only its start. */
export function tooLong(field: string, value: string, max: number, hint: string): UsageError {
  return new UsageError(
    `\`${field}\` is ${value.length} characters; at most ${max} are accepted. ${hint} It began: ${JSON.stringify(value.slice(0, 80))}${value.length > 80 ? "…" : ""}`,
  );
}

/** The operation's summary on one line of at most 100 characters. */
export function oneLine(op: Pick<ApiHead, "summary" | "description">): string {
  const text = (op.summary || op.description.split(/(?<=\.)\s/)[0] || "").replace(/\s+/g, " ").trim();
  return text.length > 100 ? `${text.slice(0, 99)}…` : text;
}

export interface ResolvedOperation {
  op: ApiHead;
  /** Path parameters read from a concrete path (`/session/ses_1` → `{sessionID: "ses_1"}`). */
  params: Record<string, string>;
  /** Query parameters written after `?` in the path. */
  query: Record<string, string>;
}

/** An id (`session.get`), or `METHOD /path` where the path is a template or a concrete URL path. */
export function resolveOperation(ref: string, catalog: ApiCatalog = PINNED_CATALOG): ResolvedOperation | undefined {
  if (ref.length > MAX_REF) throw tooLong("operation", ref, MAX_REF, 'Give an id (e.g. "session.list") or "METHOD /path".');
  const text = ref.trim();
  const byId = catalog.byId(text) ?? catalog.heads.find((op) => op.id.toLowerCase() === text.toLowerCase());
  if (byId) return { op: byId, params: {}, query: {} };
  const m = /^([A-Za-z]+)\s+(\S+)$/.exec(text);
  if (m) return matchPath(m[1]!, m[2]!, catalog);
  if (text.startsWith("/")) {
    // A bare path is fine when only one method serves it.
    const hits = METHODS.map((method) => matchPath(method, text, catalog)).filter((r): r is ResolvedOperation => r !== undefined);
    return hits.length === 1 ? hits[0] : undefined;
  }
  return undefined;
}

/** Matches a path (template or concrete, optional `?query`) against the operations of one method. */
export function matchPath(method: string, rawPath: string, catalog: ApiCatalog = PINNED_CATALOG): ResolvedOperation | undefined {
  if (rawPath.length > MAX_REF * 10) throw tooLong("path", rawPath, MAX_REF * 10, "Give the operation's path, e.g. /session/ses_1/message.");
  const want = method.toLowerCase();
  const [pathPart = "", queryPart] = rawPath.trim().split("?", 2);
  const normal = ("/" + pathPart.replace(/^\/+/, "")).replace(/(.)\/+$/, "$1");
  const segs = normal.split("/");
  let best: ResolvedOperation | undefined;
  let bestLiterals = -1;
  for (const op of catalog.heads) {
    if (op.method !== want) continue;
    const tpl = op.path.split("/");
    if (tpl.length !== segs.length) continue;
    const params: Record<string, string> = {};
    let literals = 0;
    let ok = true;
    for (let i = 0; i < tpl.length && ok; i++) {
      const t = tpl[i]!;
      const s = segs[i]!;
      const name = /^\{(.+)\}$/.exec(t)?.[1];
      if (name === undefined) {
        if (t === s) literals += 1;
        else ok = false;
      } else if (s === t) {
        // the template itself was given: the value comes from `params`
      } else if (s === "") {
        ok = false;
      } else {
        params[name] = safeDecode(s);
      }
    }
    // `/session/status` must beat `/session/{sessionID}`: prefer the most literal segments.
    if (ok && literals > bestLiterals) {
      best = { op, params, query: {} };
      bestLiterals = literals;
    }
  }
  if (best && queryPart) best.query = Object.fromEntries(new URLSearchParams(queryPart));
  return best;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function words(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** Same word give or take a typo or a plural: edit distance ≤ 1 per 4 letters, or a 4-letter common prefix. */
function near(a: string, b: string): boolean {
  if (commonPrefix(a, b) >= 4) return true;
  const limit = Math.max(1, Math.floor(Math.min(a.length, b.length) / 4));
  if (Math.abs(a.length - b.length) > limit) return false;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]! <= limit;
}

/** Up to `n` operations close to a wrong reference: shared words first, then a shared prefix. */
export function suggestOperations(ref: string, n = 5, catalog: ApiCatalog = PINNED_CATALOG): ApiHead[] {
  const lower = ref.trim().toLowerCase();
  const refWords = new Set(words(ref));
  const refPath = /\/\S*/.exec(ref)?.[0]?.toLowerCase();
  const scored = catalog.heads.map((op) => {
    const opWords = new Set(words(`${op.id} ${op.path}`));
    let score = 0;
    for (const w of refWords) {
      if (opWords.has(w)) score += 10;
      else if (w.length >= 4 && [...opWords].some((o) => near(o, w))) score += 7; // typos, plurals
    }
    score += commonPrefix(lower, op.id.toLowerCase());
    if (refPath) score += commonPrefix(refPath, op.path.toLowerCase());
    return { op, score };
  });
  return scored
    .filter((s) => s.score > 1)
    .sort((a, b) => b.score - a.score || a.op.id.localeCompare(b.op.id))
    .slice(0, n)
    .map((s) => s.op);
}

/**
 * The error for a reference that names no operation of the catalog: a pinned operation the
 * connected server lacks is explained (its version, the first tested release with it); anything
 * else gets the closest ids.
 */
export function unknownOperation(ref: string, catalog: ApiCatalog = PINNED_CATALOG): Error {
  if (catalog.spec) {
    const pinned = resolveOperation(ref, PINNED_CATALOG)?.op;
    const refusal = pinned && unsupported(catalog.spec, pinned);
    if (refusal) return refusal;
  }
  const close = suggestOperations(ref, 5, catalog);
  const hint = close.length > 0 ? ` Closest: ${close.map((op) => `${op.id} (${methodOf(op)} ${op.path})`).join(", ")}.` : "";
  return new UsageError(`No opencode operation ${quoted(ref)}.${hint} Search with oc_api_ops {search: "<words>"}.`);
}

export function searchOperations(query: string, catalog: ApiCatalog): ApiHead[] {
  const want = words(query);
  const hits = catalog.heads.filter((op) => {
    const hay = [op.id, op.method, op.path, op.summary, ...op.tags].join(" ").toLowerCase();
    return want.every((w) => hay.includes(w));
  });
  // Words that name the id rank first (`session list` → session.list before v2.session.list).
  const rank = (op: ApiHead) => {
    const idWords = words(op.id);
    return want.reduce((sum, w) => sum + (idWords.includes(w) ? 3 : op.id.toLowerCase().includes(w) ? 2 : 0), 0) - idWords.length * 0.1;
  };
  return hits.sort((a, b) => rank(b) - rank(a) || a.id.localeCompare(b.id));
}

/** `session`, `v2.session`, `experimental`: how the index groups ids. */
export function groupOf(op: ApiHead): string {
  const parts = op.id.split(".");
  return parts[0] === "v2" && parts.length > 2 ? `v2.${parts[1]}` : parts[0]!;
}
