// Which opencode is at a URL: its major (1.x speaks the v1 API, 2.x only the v2 API under /api),
// its version and, on 2.x, its pid. The health/info routes are probed before any spec is known, so
// their paths live here, in one table, and nowhere else. Observed (docs/opencode-2x-behaviour.md):
// 1.x answers `GET /global/health` {healthy, version}, and `GET /api/health` with {healthy} only (no
// version) and `/api/info` with its web app's HTML; the 2.x pre-release answers `GET /api/health`
// {healthy, version, pid} and 404 on /global/health; the released 2.0.x has `GET /api/info`
// {version, pid, urls, paths}. Every probe needs the password on both majors.
import { ConnectionError, errorForResponse, OpencodeError, safeUrl } from "./errors.js";

export type OpencodeMajor = 1 | 2;

export interface ServerIdentity {
  major: OpencodeMajor;
  /** What the server says it is, e.g. `1.18.33`, `2.0.26`, `2.0.0-src.b622626`. */
  version: string;
  /** The server process id (2.x reports it). */
  pid?: number;
  /** The route that answered. */
  via: string;
  /** Where the server serves its own OpenAPI document. */
  specPath: string;
}

export interface ServerTarget {
  url: string;
  password?: string;
  /** Basic-auth user; default `opencode`. */
  username?: string;
  fetch?: (request: Request) => Promise<Response>;
  /** Per-probe timeout (ms); default 5 000. */
  timeoutMs?: number;
}

interface Probe {
  path: string;
  major: OpencodeMajor;
  specPath: string;
}

// 1.x first: its /api/health would otherwise pass for a 2.x one (it has no version, so it would
// be rejected, but asking the right route first saves a request).
const PROBES: readonly Probe[] = [
  { path: "/global/health", major: 1, specPath: "/doc" },
  { path: "/api/info", major: 2, specPath: "/openapi.json" },
  { path: "/api/health", major: 2, specPath: "/openapi.json" },
];

export function authHeader(target: Pick<ServerTarget, "username" | "password">): Record<string, string> {
  if (target.password === undefined) return {};
  return { authorization: `Basic ${Buffer.from(`${target.username ?? "opencode"}:${target.password}`).toString("base64")}` };
}

/** Probes the server's health/info routes; throws AuthError on a wrong password, ConnectionError when nothing answers. */
export async function detectServer(target: ServerTarget): Promise<ServerIdentity> {
  const tried: string[] = [];
  for (const probe of PROBES) {
    const response = await getJson(target, probe.path);
    if (response.status === 401 || response.status === 403)
      throw errorForResponse(response.status, response.body, { method: "GET", url: safeUrl(target.url + probe.path) });
    const body = response.body as { version?: unknown; pid?: unknown } | undefined;
    if (response.status === 200 && body && typeof body.version === "string" && body.version) {
      const fromVersion = Number.parseInt(body.version, 10);
      const major: OpencodeMajor = fromVersion === 1 || fromVersion === 2 ? fromVersion : probe.major;
      return {
        major,
        version: body.version,
        ...(typeof body.pid === "number" ? { pid: body.pid } : {}),
        via: probe.path,
        specPath: major === probe.major ? probe.specPath : PROBES.find((p) => p.major === major)!.specPath,
      };
    }
    tried.push(`${probe.path} → ${response.status === 200 ? "no version" : `HTTP ${response.status}`}`);
  }
  throw new OpencodeError(`The server at ${safeUrl(target.url)} does not look like opencode 1.x or 2.x (${tried.join(", ")}). Check OPENCODE_URL.`, 0);
}

/** The server's own OpenAPI document, as served (bytes) and parsed. */
export async function fetchServerSpec(target: ServerTarget, identity: ServerIdentity): Promise<{ bytes: Buffer; doc: unknown }> {
  const response = await get(target, identity.specPath);
  const bytes = Buffer.from(await response.arrayBuffer());
  if (!response.ok) throw errorForResponse(response.status, undefined, { method: "GET", url: safeUrl(target.url + identity.specPath) });
  try {
    return { bytes, doc: JSON.parse(bytes.toString("utf8")) };
  } catch {
    throw new OpencodeError(`opencode ${identity.version} answered GET ${identity.specPath} with something that is not JSON.`, response.status);
  }
}

async function getJson(target: ServerTarget, path: string): Promise<{ status: number; body: unknown }> {
  const response = await get(target, path);
  const isJson = (response.headers.get("content-type") ?? "").includes("json");
  const text = await response.text();
  if (!isJson) return { status: response.status, body: undefined }; // e.g. 1.x's web app HTML
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: undefined };
  }
}

async function get(target: ServerTarget, path: string): Promise<Response> {
  const base = target.url.replace(/\/+$/, "");
  const fetchImpl = target.fetch ?? ((request: Request) => globalThis.fetch(request));
  const timeoutMs = target.timeoutMs ?? 5_000;
  const request = new Request(base + path, {
    headers: { accept: "application/json", ...authHeader(target) },
    signal: AbortSignal.timeout(timeoutMs),
  });
  try {
    return await fetchImpl(request);
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    throw new ConnectionError(
      timedOut
        ? `opencode at ${safeUrl(base)} did not answer GET ${path} within ${timeoutMs} ms.`
        : `Cannot reach opencode at ${safeUrl(base)}. Is it running? Start one with \`opencode serve --port 4096\` or set OPENCODE_URL.`,
      timedOut ? "timeout" : "unreachable",
      { method: "GET", url: safeUrl(base + path) },
      error,
    );
  }
}
