// Starting an opencode when none is configured or running. With a 2.x CLI that has the background
// service: `opencode service start` (the service every 2.x client shares, which keeps running after
// this process; service/start.ts). Otherwise, 1.x included: a private `opencode serve` under our
// supervisor, stopped when this process exits (spawn.ts).
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
  return { kind: "serve", binary, server, note: `started ${what} serve at ${server.url} (pid ${server.pid})${why}` };
}
