// Listening loopback ports of opencode processes: on Linux `/proc/*/cmdline` for opencode
// processes, their socket inodes (`/proc/PID/fd`) matched against LISTEN rows of `/proc/net/tcp{,6}`;
// on macOS `lsof` (code path present, not tested on CI).
import { execFile } from "node:child_process";
import { readdir, readFile, readlink } from "node:fs/promises";
import { endianness } from "node:os";
import { isOpencodeCommand } from "./processes.js";

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

export interface Listener {
  pid: number;
  host: string;
  port: number;
  cwd?: string;
}

async function scanProc(): Promise<Listener[]> {
  const sockets = new Map<number, { host: string; port: number }>();
  for (const [file, family] of [
    ["/proc/net/tcp", 4],
    ["/proc/net/tcp6", 6],
  ] as const) {
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

/** Listening loopback ports of opencode processes, by the platform's means (none elsewhere). */
export function scanListeners(): Promise<Listener[]> {
  return process.platform === "linux" ? scanProc() : process.platform === "darwin" ? scanLsof() : Promise.resolve([]);
}
