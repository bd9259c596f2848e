// Choosing the opencode server to connect to: OPENCODE_URL, a 2.x background service, a running
// server for the directory, in that order; each step is reported (no passwords).
import { realpath } from "node:fs/promises";
import { safeUrl } from "../errors.js";
import { findService } from "../service/discover.js";
import { findRunningServers, type RunningServer } from "./running-servers.js";

export interface DiscoveryStep {
  step: "options" | "env" | "service" | "scan";
  result: string;
}

export interface DiscoveredConnection {
  url: string;
  password?: string;
  username?: string;
  source: "options" | "env" | "service" | "scan";
  /** Set when found by the scan or from a service file. */
  pid?: number;
  /** The opencode version the service file's server reported (source "service"). */
  version?: string;
}

export interface DiscoverConnectionOptions {
  url?: string;
  password?: string;
  username?: string;
  /**
   * Environment to read OPENCODE_URL / OPENCODE_PASSWORD / OPENCODE_USERNAME from, and HOME /
   * XDG_STATE_HOME (where the 2.x service's discovery file is); default process.env.
   */
  env?: NodeJS.ProcessEnv;
  /** Look for the opencode 2.x background service's discovery file (default true). */
  service?: boolean;
  /** Told each step as it is decided (the debug log); never given a password. */
  onStep?(step: DiscoveryStep): void;
  /** The project directory: a running server whose cwd is this one is preferred. */
  directory?: string;
  /** Per-probe timeout (ms, ≤ 1000). */
  timeoutMs?: number;
  /** Processes not to pick (the conductor's private instances). */
  excludePids?: Iterable<number>;
}

export interface DiscoveryResult {
  /** undefined: nothing usable was found; the caller starts its own server. */
  connection?: DiscoveredConnection;
  /** What each step found, for oc_status. Never contains a password. */
  steps: DiscoveryStep[];
}

/**
 * Where to connect: explicit options, then OPENCODE_URL (+ OPENCODE_PASSWORD), then a live opencode
 * 2.x background service from its discovery file (`$XDG_STATE_HOME/opencode/service.json`, with the
 * password in it), then the single healthy running server (one whose cwd is `directory` wins when
 * several run), else nothing.
 */
export async function discoverConnection(options: DiscoverConnectionOptions = {}): Promise<DiscoveryResult> {
  const env = options.env ?? process.env;
  const steps: DiscoveryStep[] = [];
  const note = (step: DiscoveryStep) => {
    steps.push(step);
    options.onStep?.(step);
  };
  const password = options.password ?? (env.OPENCODE_PASSWORD || undefined);
  const username = options.username ?? (env.OPENCODE_USERNAME || undefined);
  const auth = { ...(password !== undefined ? { password } : {}), ...(username !== undefined ? { username } : {}) };
  const withPassword = password !== undefined ? " with a password" : " without a password";

  if (options.url) {
    note({ step: "options", result: `using ${safeUrl(options.url)}${withPassword}` });
    return { connection: { url: options.url, ...auth, source: "options" }, steps };
  }
  note({ step: "options", result: "no url given" });

  if (env.OPENCODE_URL) {
    note({ step: "env", result: `using OPENCODE_URL=${safeUrl(env.OPENCODE_URL)}${withPassword}` });
    return { connection: { url: env.OPENCODE_URL, ...auth, source: "env" }, steps };
  }
  note({ step: "env", result: "OPENCODE_URL not set" });

  if (options.service !== false) {
    // A file that cannot be used is skipped with its reason; the scan still runs.
    const found = await findService({ env });
    const seen = found.checks.map((c) => `${c.file}: ${c.result}`).join("; ");
    if (found.live) {
      const { registration: r, identity } = found.live;
      const skipped = found.checks.filter((c) => !c.live).map((c) => `${c.file}: ${c.result}`);
      note({
        step: "service",
        result: `using the opencode ${identity.version} background service at ${safeUrl(r.url)} (pid ${r.pid}) from ${found.live.file}${skipped.length ? `; skipped ${skipped.join("; ")}` : ""}`,
      });
      return {
        connection: {
          url: r.url,
          ...(r.password !== undefined ? { password: r.password } : {}),
          source: "service",
          pid: r.pid,
          version: identity.version,
        },
        steps,
      };
    }
    note({ step: "service", result: found.checks.length ? seen : `no opencode 2.x service file in ${found.dir}` });
  }

  const servers = await findRunningServers({ timeoutMs: options.timeoutMs, password, username, excludePids: options.excludePids });
  const healthy = servers.filter((s) => s.healthy);
  const wanted = options.directory ? await realpath(options.directory).catch(() => options.directory) : undefined;
  const inDirectory = wanted ? healthy.filter((s) => s.cwd === wanted) : [];
  const pick = inDirectory.length === 1 ? inDirectory[0] : healthy.length === 1 ? healthy[0] : undefined;
  const listing = servers.map(describeServer).join("; ");
  const found = servers.length === 0 ? "no running opencode server found" : `found ${servers.length} server${servers.length === 1 ? "" : "s"}: ${listing}`;
  if (pick) {
    note({ step: "scan", result: `${found}; using ${pick.url} (pid ${pick.pid})` });
    return { connection: { url: pick.url, ...auth, source: "scan", pid: pick.pid }, steps };
  }
  const why =
    healthy.length > 1
      ? `; ${healthy.length} are usable and none is the only one in ${wanted ?? "the requested directory"}: set OPENCODE_URL to choose`
      : servers.some((s) => s.needsPassword && !s.healthy)
        ? `; set OPENCODE_PASSWORD to use a server that needs a password`
        : "";
  note({ step: "scan", result: `${found}${why}` });
  return { steps };
}

function describeServer(s: RunningServer): string {
  const state = s.healthy ? `healthy${s.version ? ` ${s.version}` : ""}` : s.needsPassword ? "needs a password" : "not answering";
  return `${s.url} pid ${s.pid} ${state}${s.cwd ? ` in ${s.cwd}` : ""}`;
}
