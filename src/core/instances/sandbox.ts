// Opt-in OS sandbox for private instances (OPENCODE_CONDUCTOR_SANDBOX=srt): `opencode serve` runs
// under `srt` (@anthropic-ai/sandbox-runtime; bubblewrap on Linux) with a per-instance settings file.
//
// On Linux srt always gives the child its own network namespace: the server's port is not reachable
// from here, and 127.0.0.1 inside is not ours. So (1) inside, socat relays a unix socket in a shared
// directory to the server's port, and here a TCP listener on the same port number relays to that
// socket; (2) NO_PROXY is cleared inside so loopback traffic (the model) goes through srt's proxy,
// whose allowlist names 127.0.0.1/localhost.
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { UsageError } from "../errors.js";
import { startRelay } from "./relay.js";

export interface SrtCommand {
  command: string;
  /** Arguments before srt's own (e.g. the cli.js path when run with node). */
  args: string[];
}

/** Where srt is: `explicit` when given, else the installed package's cli, else `srt` on PATH. */
export function resolveSrt(explicit?: string): SrtCommand {
  const hint = "install it (npm install -g @anthropic-ai/sandbox-runtime, plus bubblewrap, socat and ripgrep on Linux) or unset OPENCODE_CONDUCTOR_SANDBOX";
  if (explicit) {
    if (!isExecutable(explicit))
      throw new UsageError(`Sandbox "srt" requested but ${explicit} is not an executable srt: ${hint}. The instance was not started.`);
    return { command: explicit, args: [] };
  }
  try {
    const pkg = createRequire(import.meta.url).resolve("@anthropic-ai/sandbox-runtime/package.json");
    const cli = join(dirname(pkg), "dist", "cli.js");
    if (existsSync(cli)) return { command: process.execPath, args: [cli] };
  } catch {
    // not installed here: try PATH
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "srt");
    if (dir && isExecutable(candidate)) return { command: candidate, args: [] };
  }
  throw new UsageError(`Sandbox "srt" requested but no srt binary was found (node_modules or PATH): ${hint}. The instance was not started.`);
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Hosts an instance may reach besides loopback: opencode's own services and common model APIs. */
export const DEFAULT_ALLOWED_DOMAINS = [
  "opencode.ai",
  "*.opencode.ai",
  "models.dev",
  "api.anthropic.com",
  "api.openai.com",
  "openrouter.ai",
  "generativelanguage.googleapis.com",
];

const CREDENTIAL_PATHS = [
  ".ssh",
  ".aws",
  ".config/gh",
  ".netrc",
  ".npmrc",
  ".kube",
  ".docker/config.json",
  ".git-credentials",
  ".config/gcloud",
  ".azure",
  ".gnupg",
];

export interface SrtSettingsInput {
  directory: string;
  /** The instance environment (HOME and XDG dirs). */
  env: NodeJS.ProcessEnv;
  /** Per-instance scratch dir: temp files and the relay socket. */
  scratch: string;
  /** Files to hide although not credentials (the instance registry with passwords). */
  hide?: string[];
  allowedDomains?: string[];
}

/** opencode's own data/config/state/cache dirs for `env` (where it writes sessions, logs, caches). */
export function opencodeDirs(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME || homedir();
  const xdg = (name: string, fallback: string) => (env[name] && isAbsolute(env[name]!) ? env[name]! : join(home, fallback));
  return [xdg("XDG_DATA_HOME", ".local/share"), xdg("XDG_CONFIG_HOME", ".config"), xdg("XDG_STATE_HOME", ".local/state"), xdg("XDG_CACHE_HOME", ".cache")].map(
    (d) => join(d, "opencode"),
  );
}

/** The git dirs of `directory`: its .git, or for a worktree the gitdir the .git file names. */
export function gitDirs(directory: string): string[] {
  const dotGit = join(directory, ".git");
  try {
    const m = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, "utf8"));
    if (m?.[1]) {
      const gitdir = resolve(directory, m[1].trim());
      const common = existsSync(join(gitdir, "commondir")) ? resolve(gitdir, readFileSync(join(gitdir, "commondir"), "utf8").trim()) : undefined;
      return [dotGit, gitdir, ...(common ? [common] : [])];
    }
  } catch {
    // a directory (EISDIR) or no .git at all
  }
  return [dotGit];
}

/** The srt settings (its --settings JSON) for one instance. */
export function srtSettings(input: SrtSettingsInput): Record<string, unknown> {
  const homes = [...new Set([input.env.HOME || homedir(), homedir()])];
  return {
    network: {
      // srt's proxy refuses loopback unless listed as an IP literal: the model may be local.
      allowedDomains: ["127.0.0.1", "localhost", ...(input.allowedDomains ?? DEFAULT_ALLOWED_DOMAINS)],
      deniedDomains: [],
      // The relay socket (see top); Linux seccomp would block it otherwise.
      allowAllUnixSockets: true,
      allowLocalBinding: true,
    },
    filesystem: {
      allowWrite: [input.directory, ...gitDirs(input.directory), ...opencodeDirs(input.env), input.scratch],
      denyRead: [...homes.flatMap((h) => CREDENTIAL_PATHS.map((p) => join(h, p))), join(input.directory, "**", ".env*"), ...(input.hide ?? [])],
      denyWrite: [],
    },
  };
}

export interface Sandbox {
  /** Wraps `opencode serve <args>` in srt; give it to spawnOpencode's `wrap`. */
  wrap(command: string, args: string[]): { command: string; args: string[] };
  /** The host port of the relay; start opencode with this `--port` (inside, it is free). */
  port: number;
  settingsFile: string;
  /** Stops the relay and removes the settings file and scratch dir. */
  close(): Promise<void>;
}

/** Writes the settings (0600) under `stateDir/sandbox/` and starts the host side of the relay. */
export async function prepareSandbox(o: {
  srt: SrtCommand;
  stateDir: string;
  directory: string;
  env: NodeJS.ProcessEnv;
  hide?: string[];
  allowedDomains?: string[];
}): Promise<Sandbox> {
  // The relay below assumes srt's Linux network namespace; on macOS the ports would collide.
  if (process.platform !== "linux")
    throw new UsageError(
      `Sandbox "srt" is supported on Linux only for now (this is ${process.platform}): unset OPENCODE_CONDUCTOR_SANDBOX. The instance was not started.`,
    );
  const base = join(o.stateDir, "sandbox");
  const id = randomBytes(6).toString("hex");
  const scratch = join(base, id);
  const settingsFile = join(base, `${id}.json`);
  const tmp = join(scratch, "tmp");
  const socket = join(scratch, "s.sock");
  await mkdir(tmp, { recursive: true, mode: 0o700 });
  await Promise.all(opencodeDirs(o.env).map((d) => mkdir(d, { recursive: true }))); // bwrap binds existing paths only
  const settings = srtSettings({
    directory: o.directory,
    env: o.env,
    scratch,
    ...(o.hide ? { hide: o.hide } : {}),
    ...(o.allowedDomains ? { allowedDomains: o.allowedDomains } : {}),
  });
  await writeFile(settingsFile, JSON.stringify(settings, null, 2), { mode: 0o600 });
  await chmod(settingsFile, 0o600);

  let relay: Awaited<ReturnType<typeof startRelay>>;
  try {
    relay = await startRelay(socket);
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    await rm(settingsFile, { force: true });
    throw error;
  }
  // Inside: relay the socket to the server's port, let loopback go through srt's proxy, then exec.
  const script = `socat UNIX-LISTEN:"$OCC_SOCK",fork,unlink-early TCP:127.0.0.1:"$OCC_PORT" & NO_PROXY= no_proxy= TMPDIR="$OCC_TMP" exec "$@"`;
  return {
    port: relay.port,
    settingsFile,
    wrap: (command, args) => ({
      command: o.srt.command,
      args: [
        ...o.srt.args,
        "--settings",
        settingsFile,
        "--",
        "env",
        `OCC_SOCK=${socket}`,
        `OCC_PORT=${relay.port}`,
        `OCC_TMP=${tmp}`,
        "sh",
        "-c",
        script,
        "sh",
        command,
        ...args,
      ],
    }),
    close: async () => {
      await new Promise<void>((r) => relay.server.close(() => r()));
      await rm(scratch, { recursive: true, force: true });
      await rm(settingsFile, { force: true });
    },
  };
}
