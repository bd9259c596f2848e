// opencode servers already running on this machine: opencode keeps no record of them
// (docs/opencode-behaviour.md §1 "State"), so listening opencode processes are found (listeners.ts)
// and every port is probed on `/global/health` with a short timeout: a port accepts connections
// before the app answers, and such a request may never be answered (docs/opencode-behaviour.md §0.2).
import { scanListeners, type Listener } from "./listeners.js";

export interface RunningServer {
  /** `http://127.0.0.1:PORT` (no credentials). */
  url: string;
  pid: number;
  port: number;
  /** `/global/health` answered `healthy: true` (with the password when one was needed and given). */
  healthy: boolean;
  version?: string;
  /** The server answered 401 without credentials. */
  needsPassword: boolean;
  /** The process's working directory (the server's default project), when readable. */
  cwd?: string;
}

export interface FindServersOptions {
  /** Per-probe timeout; capped at 1000 ms (default 800). */
  timeoutMs?: number;
  /** Tried on servers that answer 401. */
  password?: string;
  username?: string;
  /** Processes to leave out (e.g. private instances of the registry). */
  excludePids?: Iterable<number>;
}

const MAX_PROBE_MS = 1000;

/** opencode servers listening on a loopback (or wildcard) TCP port, probed for health. */
export async function findRunningServers(options: FindServersOptions = {}): Promise<RunningServer[]> {
  const exclude = new Set([process.pid, ...(options.excludePids ?? [])]);
  const listeners = (await scanListeners()).filter((l) => !exclude.has(l.pid));
  const timeoutMs = Math.min(options.timeoutMs ?? 800, MAX_PROBE_MS);
  return Promise.all(listeners.map((l) => probe(l, { ...options, timeoutMs })));
}

async function probe(l: Listener, o: FindServersOptions & { timeoutMs: number }): Promise<RunningServer> {
  const url = `http://${l.host}:${l.port}`;
  const base = { url, pid: l.pid, port: l.port, ...(l.cwd ? { cwd: l.cwd } : {}) };
  const first = await health(url, undefined, o.timeoutMs);
  if (first.status === 401) {
    if (o.password === undefined) return { ...base, healthy: false, needsPassword: true };
    const auth = `Basic ${Buffer.from(`${o.username ?? "opencode"}:${o.password}`).toString("base64")}`;
    const second = await health(url, auth, o.timeoutMs);
    return { ...base, healthy: second.healthy, needsPassword: true, ...(second.version ? { version: second.version } : {}) };
  }
  return { ...base, healthy: first.healthy, needsPassword: false, ...(first.version ? { version: first.version } : {}) };
}

async function health(url: string, authorization: string | undefined, timeoutMs: number): Promise<{ status: number; healthy: boolean; version?: string }> {
  try {
    const response = await fetch(`${url}/global/health`, {
      headers: authorization ? { authorization } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return { status: response.status, healthy: false };
    }
    const body = (await response.json()) as { healthy?: unknown; version?: unknown };
    return { status: response.status, healthy: body.healthy === true, ...(typeof body.version === "string" ? { version: body.version } : {}) };
  } catch {
    return { status: 0, healthy: false }; // refused, timed out, or not JSON: not usable
  }
}
