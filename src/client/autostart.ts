// Starting an opencode when none is configured or running. With a 2.x CLI that has the background
// service: `opencode service start` (the service every 2.x client shares, which keeps running after
// this process; service/start.ts). Otherwise, 1.x included: a private `opencode serve` under our
// supervisor, stopped when this process exits (spawn.ts).
import { connect } from "./connect.js";
import { cliInfo } from "./service/cli.js";
import { startService, ServiceStartError } from "./service/start.js";
import type { LiveService } from "./service/discover.js";
import { findExecutable, MissingBinaryError, resolveOpencodeBinary, spawnOpencode, type SpawnedOpencode } from "./spawn.js";

export type AutoStarted =
  | { kind: "service"; binary: string; service: LiveService; /** How it was started, for oc_status (no password). */ note: string }
  | { kind: "serve"; binary: string; server: SpawnedOpencode; note: string };

export interface AutoStartOptions {
  /** The project directory (a `serve` starts in it). */
  cwd: string;
  /** Default: {@link resolveOpencodeBinary}. */
  binary?: string;
  /** Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** Use the 2.x background service when the CLI has it (default true). */
  service?: boolean;
}

export async function autoStart(options: AutoStartOptions): Promise<AutoStarted> {
  const binary = options.binary ?? resolveOpencodeBinary();
  const env = options.env ?? process.env;
  if (!findExecutable(binary, env.PATH)) throw new MissingBinaryError(binary);
  const cli = await cliInfo(binary, env);
  let why = "";
  if (cli.major === 2 && cli.hasService && options.service !== false) {
    try {
      const service = await startService({ binary, env, cwd: options.cwd });
      const r = service.registration;
      return {
        kind: "service",
        binary,
        service,
        note: `started the opencode ${service.identity.version} background service (${binary} service start) at ${r.url} (pid ${r.pid}, discovery file ${service.file}); it stays running for other clients: \`opencode service stop\` stops it`,
      };
    } catch (error) {
      if (!(error instanceof ServiceStartError)) throw error;
      why = ` (the background service did not start: ${error.message})`;
    }
  }
  const server = await spawnOpencode({ cwd: options.cwd, binary, env });
  const what = cli.version ? `opencode ${cli.version}` : "opencode";
  const warm = await warmUp(server, options.cwd);
  return { kind: "serve", binary, server, note: `started ${what} serve at ${server.url} (pid ${server.pid}; ${warm})${why}` };
}

/** How long a server we just started may take to load its providers before it is handed over. */
const WARM_UP_MS = 120_000;

/**
 * opencode loads its providers on the first request that needs them: 9 s on a loaded 2-core
 * machine (measured), past the 30 s a request may take when other work shares the cores. A server
 * this process started is handed over once it has (or has said it cannot), so the first tool
 * call's own timeout measures opencode answering, not opencode booting. The outcome goes into the
 * start note (oc_status shows it); a failure here is left to the calls that need the providers.
 */
async function warmUp(server: SpawnedOpencode, cwd: string): Promise<string> {
  const started = Date.now();
  const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  try {
    const client = connect({ url: server.url, password: server.password, username: server.username, directory: cwd, timeoutMs: WARM_UP_MS });
    await client.call("config.providers", {});
    return `providers loaded in ${seconds()}`;
  } catch (error) {
    return `its providers did not load (${seconds()}): ${(error as Error).message}`;
  }
}
