// Finding opencode servers already running on this machine, and choosing the one to connect to.
// opencode keeps no record of running servers (docs/opencode-behaviour.md §1 "State"), so we look at processes: on Linux
// `/proc/*/cmdline` for opencode processes, their socket inodes (`/proc/PID/fd`) matched against
// LISTEN rows of `/proc/net/tcp{,6}`; on macOS `lsof` (code path present, not tested on CI).
// Every port is probed on `/global/health` with a short timeout: a port accepts connections
// before the app answers, and such a request may never be answered (docs/opencode-behaviour.md §0.2).
import { execFile, execFileSync } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import { readdir, readFile, readlink, realpath } from "node:fs/promises";
import { endianness } from "node:os";
import { basename } from "node:path";
import { safeUrl } from "./errors.js";
import { isProcessAlive } from "./process-alive.js";
import { findService } from "./service/discover.js";

export { isProcessAlive };

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
  const listeners = (process.platform === "linux" ? await scanProc() : process.platform === "darwin" ? await scanLsof() : []).filter((l) => !exclude.has(l.pid));
  const timeoutMs = Math.min(options.timeoutMs ?? 800, MAX_PROBE_MS);
  return Promise.all(listeners.map((l) => probe(l, { ...options, timeoutMs })));
}

// ---------------------------------------------------------------------------------------------
// Which processes are opencode

/** True for an opencode binary or a runtime (bun/node) running opencode's entry point. */
export function isOpencodeCommand(argv: readonly string[], exe?: string): boolean {
  const isBinary = (p: string | undefined) => p !== undefined && /^\.?opencode(\.exe)?$/i.test(basename(p));
  if (isBinary(argv[0]) || isBinary(exe)) return true;
  const runtime = basename(argv[0] ?? "");
  if (!/^(bun|node|bunx|npx)(\.exe)?$/i.test(runtime)) return false;
  // `bun run packages/opencode/src/index.ts serve` (a source checkout) or `node …/bin/opencode`.
  return argv.slice(1).some((a) => isBinary(a) || /(^|\/)packages\/opencode\/src\/index\.ts$/.test(a));
}

/** The process's argv (Linux: /proc; elsewhere: `ps`, split on spaces), or undefined when gone. */
export function processArgv(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" || process.platform === "linux") return undefined;
  }
  return psArgv(pid);
}

function psArgv(pid: number): string[] | undefined {
  try {
    // Synchronous on purpose: used from the exit path and from stale-row checks.
    const out = execFileSync("ps", ["-o", "command=", "-p", String(pid)], { encoding: "utf8", timeout: 2000 }).trim();
    return out ? out.split(/\s+/) : undefined;
  } catch {
    return undefined;
  }
}

/** Alive and its command line is opencode's: checked before killing anything (pids get reused). */
export function isOpencodeProcess(pid: number): boolean {
  if (!isProcessAlive(pid)) return false;
  const argv = processArgv(pid);
  if (!argv) return false;
  let exe: string | undefined;
  try {
    exe = readlinkSync(`/proc/${pid}/exe`);
  } catch {
    exe = undefined;
  }
  return isOpencodeCommand(argv, exe);
}

// ---------------------------------------------------------------------------------------------
// /proc/net/tcp parsing (exported for unit tests)

export interface TcpRow {
  address: string;
  port: number;
  /** Kernel state in hex; `0A` = LISTEN. */
  state: string;
  inode: number;
}

/**
 * Rows of `/proc/net/tcp` (family 4) or `/proc/net/tcp6` (family 6). Addresses are hex words in host
 * byte order: `0100007F:172B` is 127.0.0.1:5931 on a little-endian machine.
 */
export function parseProcNetTcp(text: string, family: 4 | 6, byteOrder: "LE" | "BE" = endianness()): TcpRow[] {
  const rows: TcpRow[] = [];
  for (const line of text.split("\n").slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10) continue;
    const [addrHex, portHex] = (cols[1] ?? "").split(":");
    const inode = Number(cols[9]);
    if (!addrHex || !portHex || !Number.isFinite(inode)) continue;
    const address = family === 4 ? ipv4(addrHex, byteOrder) : ipv6(addrHex, byteOrder);
    if (address === undefined) continue;
    rows.push({ address, port: parseInt(portHex, 16), state: (cols[3] ?? "").toUpperCase(), inode });
  }
  return rows;
}

function wordBytes(hex: string, byteOrder: "LE" | "BE"): number[] {
  const bytes = [0, 2, 4, 6].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return byteOrder === "LE" ? bytes.reverse() : bytes;
}

function ipv4(hex: string, byteOrder: "LE" | "BE"): string | undefined {
  if (!/^[0-9a-f]{8}$/i.test(hex)) return undefined;
  return wordBytes(hex, byteOrder).join(".");
}

function ipv6(hex: string, byteOrder: "LE" | "BE"): string | undefined {
  if (!/^[0-9a-f]{32}$/i.test(hex)) return undefined;
  const bytes = [0, 8, 16, 24].flatMap((i) => wordBytes(hex.slice(i, i + 8), byteOrder));
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return `::ffff:${bytes.slice(12).join(".")}`;
  const groups = [0, 2, 4, 6, 8, 10, 12, 14].map((i) => ((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  const full = groups.join(":");
  if (full === "0:0:0:0:0:0:0:0") return "::";
  if (full === "0:0:0:0:0:0:0:1") return "::1";
  return full;
}

/** The host to probe a listener on, or undefined when it is not reachable over loopback. */
export function loopbackHost(address: string): string | undefined {
  if (address === "0.0.0.0" || address.startsWith("127.")) return address === "0.0.0.0" ? "127.0.0.1" : address;
  if (address === "::1" || address === "::") return "[::1]";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address)?.[1];
  if (mapped === "0.0.0.0") return "127.0.0.1";
  return mapped?.startsWith("127.") ? mapped : undefined;
}

// ---------------------------------------------------------------------------------------------
// Scanners: each yields opencode processes with a listening loopback port

interface Listener {
  pid: number;
  host: string;
  port: number;
  cwd?: string;
}

async function scanProc(): Promise<Listener[]> {
  const sockets = new Map<number, { host: string; port: number }>();
  for (const [file, family] of [["/proc/net/tcp", 4], ["/proc/net/tcp6", 6]] as const) {
    const text = await readFile(file, "utf8").catch(() => "");
    for (const row of parseProcNetTcp(text, family)) {
      const host = row.state === "0A" ? loopbackHost(row.address) : undefined;
      if (host) sockets.set(row.inode, { host, port: row.port });
    }
  }
  if (sockets.size === 0) return [];

  const pids = (await readdir("/proc").catch(() => [] as string[])).filter((n) => /^\d+$/.test(n)).map(Number);
  const found = await Promise.all(
    pids.map(async (pid): Promise<Listener[]> => {
      const argv = (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).split("\0").filter(Boolean);
      if (argv.length === 0) return [];
      const exe = await readlink(`/proc/${pid}/exe`).catch(() => undefined);
      if (!isOpencodeCommand(argv, exe)) return [];
      // Other users' fds are unreadable (EACCES): their servers are not ours to use anyway.
      const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
      const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => "")));
      const ports = new Map<number, string>();
      for (const link of links) {
        const inode = Number(/^socket:\[(\d+)\]$/.exec(link)?.[1]);
        const socket = sockets.get(inode);
        if (socket && !ports.has(socket.port)) ports.set(socket.port, socket.host);
      }
      if (ports.size === 0) return [];
      const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => undefined);
      return [...ports].map(([port, host]) => ({ pid, host, port, ...(cwd ? { cwd } : {}) }));
    }),
  );
  return found.flat();
}

/** `lsof -F pn` output: `p<pid>` starts a process, `n<addr>:<port>` names a socket (exported for tests). */
export function parseLsofListen(text: string): Array<{ pid: number; host: string; port: number }> {
  const out: Array<{ pid: number; host: string; port: number }> = [];
  let pid: number | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("p")) pid = Number(line.slice(1));
    else if (line.startsWith("n") && pid !== undefined) {
      const match = /^n(.*):(\d+)$/.exec(line.trim());
      if (!match) continue;
      const raw = match[1]!.replace(/^\[(.*)\]$/, "$1");
      const host = loopbackHost(raw === "*" ? "0.0.0.0" : raw === "localhost" ? "127.0.0.1" : raw);
      if (host) out.push({ pid, host, port: Number(match[2]) });
    }
  }
  return out;
}

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: "utf8", timeout: 3000 }, (_error, stdout) => resolve(stdout ?? ""));
  });
}

// macOS: not exercised by the test suite (Linux CI); kept simple on purpose.
async function scanLsof(): Promise<Listener[]> {
  const listeners = parseLsofListen(await run("lsof", ["-nP", "-iTCP", "-sTCP:LISTEN", "-a", "-c", "opencode", "-Fpn"]));
  const pids = [...new Set(listeners.map((l) => l.pid))];
  if (pids.length === 0) return [];
  const cwds = new Map<number, string>();
  let pid: number | undefined;
  for (const line of (await run("lsof", ["-a", "-p", pids.join(","), "-d", "cwd", "-Fpn"])).split("\n")) {
    if (line.startsWith("p")) pid = Number(line.slice(1));
    else if (line.startsWith("n") && pid !== undefined) cwds.set(pid, line.slice(1));
  }
  const seen = new Set<string>();
  return listeners.flatMap((l) => {
    const key = `${l.pid}:${l.port}`;
    if (seen.has(key)) return [];
    seen.add(key);
    const cwd = cwds.get(l.pid);
    return [{ ...l, ...(cwd ? { cwd } : {}) }];
  });
}

// ---------------------------------------------------------------------------------------------
// Health probe

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

// ---------------------------------------------------------------------------------------------
// Choosing a connection

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
