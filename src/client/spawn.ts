// Start and stop an `opencode serve` process. Used by spec:fetch, the test harness, auto-start and
// private instances. Facts it relies on (docs/opencode-behaviour.md §0.2, §1): `--port 0` is not
// random (it binds 4096), so we pick a free port ourselves; readiness is the stdout line
// "opencode server listening on http://HOST:PORT" ("server listening on ..." on 2.x); SIGTERM stops
// it in about 2 s. Each server runs under a small supervisor (supervisor.ts) that stops it when this
// process dies, even by SIGKILL.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { delimiter, dirname, join } from "node:path";
import { scratchFor } from "./scratch.js";
import { SUPERVISOR_PID_LINE, SUPERVISOR_SCRATCH, SUPERVISOR_SOURCE } from "./supervisor.js";

export interface SpawnOpencodeOptions {
  /** Project directory the server starts in (its default instance). */
  cwd: string;
  /** Path of the opencode binary; default: {@link resolveOpencodeBinary}. */
  binary?: string;
  /** Port to listen on; default: a free loopback port chosen here. */
  port?: number;
  hostname?: string;
  /** Server password; default: a random one. */
  password?: string;
  username?: string;
  /** Environment of the child. Default: this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Extra arguments after `serve --port N --hostname H`. */
  args?: string[];
  /** Runs the server through a wrapper (e.g. a sandbox): gets the binary and its args. */
  wrap?: (command: string, args: string[]) => { command: string; args: string[] };
  /** How long to wait for the "listening on" line. */
  startTimeoutMs?: number;
}

export interface SpawnedOpencode {
  url: string;
  port: number;
  /** opencode's own process (the one listening on the port). */
  pid: number;
  /** The supervisor that stops opencode when this process dies; leads the process group. */
  supervisorPid: number;
  username: string;
  password: string;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
  /** Output the process printed so far (stdout + stderr), for diagnostics. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

// 1.x prints "opencode server listening on URL", 2.x "server listening on URL".
const LISTENING = /\bserver listening on (http:\/\/[^\s:]+:(\d+))/;

/** The pinned binary from the `opencode-ai` package when installed, else `opencode` on PATH. */
export function resolveOpencodeBinary(): string {
  if (process.env.OPENCODE_BIN) return process.env.OPENCODE_BIN;
  try {
    const pkg = createRequire(import.meta.url).resolve("opencode-ai/package.json");
    const bin = join(dirname(pkg), "bin", "opencode.exe");
    if (existsSync(bin)) return bin;
  } catch {
    // not installed: fall through to PATH
  }
  return "opencode";
}

/** A port that was free on the loopback interface a moment ago. */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === "object") resolve(address.port);
        else reject(new Error("could not determine a free port"));
      });
    });
  });
}

export function randomPassword(): string {
  return randomBytes(18).toString("base64url");
}

// Children still alive when this process exits are told to stop, so nothing is left behind. A
// SIGTERM to the supervisor alone, not to its group: it lists what opencode started in groups of
// its own before opencode is signalled. A signal to the whole group reaches opencode at the same
// moment, and an opencode that exits before the supervisor has read /proc orphans its shell
// commands, out of the supervisor's sight (a `sleep 300` outlived a normal exit that way under
// load). Should the supervisor not manage, it sees this process go (its stdin closes) and kills
// them a second later.
const alive = new Set<ChildProcess>();
let exitHookInstalled = false;
function trackChild(child: ChildProcess): void {
  alive.add(child);
  child.once("exit", () => alive.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const c of alive) signalSupervisor(c, "SIGTERM");
  });
}

function signalSupervisor(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    child.kill(signal);
  } catch {
    // already gone
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal); // the whole group: opencode may have spawned helpers
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** No opencode to start: what to do about it, in one message. */
export class MissingBinaryError extends Error {
  override name = "MissingBinaryError";
  constructor(binary: string) {
    super(
      `opencode was not found (${binary.length > 200 ? `${binary.slice(0, 200)}…` : binary} is not an executable file${binary.includes("/") ? "" : " on PATH"}). ` +
        "Install it (npm i -g opencode-ai), or set OPENCODE_BIN to the opencode binary, or set OPENCODE_URL (and OPENCODE_PASSWORD) to a running opencode server.",
    );
  }
}

/** The binary's path when it can be run: a path that is an executable file, or a name found on PATH. */
export function findExecutable(binary: string, path = process.env.PATH ?? ""): string | undefined {
  const candidates = binary.includes("/")
    ? [binary]
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, binary));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export async function spawnOpencode(options: SpawnOpencodeOptions): Promise<SpawnedOpencode> {
  const hostname = options.hostname ?? "127.0.0.1";
  const username = options.username ?? "opencode";
  const password = options.password ?? randomPassword();
  const binary = options.binary ?? resolveOpencodeBinary();
  // Without this the spawn fails inside the supervisor and only its exit tells; say it plainly, now.
  if (!options.wrap && !findExecutable(binary, options.env?.PATH ?? process.env.PATH)) throw new MissingBinaryError(binary);
  // A port chosen here can be taken by someone else before opencode binds it: try a few.
  const attempts = options.port === undefined ? 3 : 1;
  let lastError: unknown;
  for (let i = 0; i < attempts; i++) {
    const port = options.port ?? (await freePort(hostname));
    try {
      return await startOnce({ ...options, binary, hostname, username, password, port });
    } catch (error) {
      lastError = error;
      if (!(error instanceof Error && /ServeError|EADDRINUSE/.test(error.message))) break;
    }
  }
  throw lastError;
}

async function startOnce(
  o: SpawnOpencodeOptions & { binary: string; hostname: string; username: string; password: string; port: number },
): Promise<SpawnedOpencode> {
  // opencode's TMPDIR is a folder of its own, removed when it exits (scratch.ts); the supervisor
  // removes it too, so it goes even when this process is SIGKILLed.
  const scratch = scratchFor(o.env ?? process.env);
  const env: NodeJS.ProcessEnv = { ...scratch.env, OPENCODE_SERVER_PASSWORD: o.password, [SUPERVISOR_SCRATCH]: scratch.dir };
  if (o.username !== "opencode") env.OPENCODE_SERVER_USERNAME = o.username;
  else delete env.OPENCODE_SERVER_USERNAME;

  const args = ["serve", "--port", String(o.port), "--hostname", o.hostname, ...(o.args ?? [])];
  const run = o.wrap ? o.wrap(o.binary, args) : { command: o.binary, args };
  // stdin is the supervisor's lifeline: it closes when this process dies.
  const child = spawn(process.execPath, ["-e", SUPERVISOR_SOURCE, run.command, ...run.args], {
    cwd: o.cwd,
    env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  trackChild(child);

  let output = "";
  let serverPid: number | undefined;
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => {
      scratch.remove();
      resolve(code ?? signal ?? "unknown");
    });
  });
  child.once("error", (error) => {
    output += `\n${error.message}`;
  });

  const ready = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      serverPid ??= Number(SUPERVISOR_PID_LINE.exec(output)?.[1]) || undefined;
      const match = LISTENING.exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    void exited.then((code) =>
      reject(new Error(`opencode serve exited (${code}) before listening: ${scrub(output, o.password).replace(SUPERVISOR_PID_LINE, "").trim()}`)),
    );
  });

  const timeoutMs = o.startTimeoutMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`opencode serve did not print its "listening on" line within ${timeoutMs} ms`)), timeoutMs);
  });

  let url: string;
  try {
    url = await Promise.race([ready, timeout]);
  } catch (error) {
    killGroup(child, "SIGKILL");
    await exited;
    throw error;
  } finally {
    clearTimeout(timer);
  }

  const stop = async (graceMs = 5_000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    signalSupervisor(child, "SIGTERM"); // it stops opencode and what opencode started (see trackChild)
    const killer = setTimeout(() => killGroup(child, "SIGKILL"), graceMs);
    await exited;
    clearTimeout(killer);
    killGroup(child, "SIGKILL"); // helpers the server left in its group
  };

  return {
    url,
    port: o.port,
    pid: serverPid ?? child.pid!,
    supervisorPid: child.pid!,
    username: o.username,
    password: o.password,
    exited,
    output: () => scrub(output, o.password).replace(SUPERVISOR_PID_LINE, ""),
    stop,
  };
}

function scrub(text: string, secret: string): string {
  return secret ? text.split(secret).join("***") : text;
}
