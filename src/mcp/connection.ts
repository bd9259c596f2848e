// The MCP server's link to opencode, made on the first tool call (initialize and tools/list never
// touch opencode): OPENCODE_URL when set, else a `opencode serve` started here on a free port with
// a random password and stopped when this process exits.
import { spawnOpencode, resolveOpencodeBinary, type SpawnedOpencode } from "../client/spawn.js";
import type { Config } from "../config.js";
import { Conductor } from "../core/conductor.js";

export interface Connection {
  conductor(): Promise<Conductor>;
  /** Secrets learned at run time (the password of a server started here). */
  secrets(): string[];
  /** How the connection was made, for oc_status. */
  describe(): { mode: "url" | "auto-started" | "not connected"; url?: string };
  close(): Promise<void>;
}

export function createConnection(config: Config): Connection {
  let pending: Promise<Conductor> | undefined;
  let started: SpawnedOpencode | undefined;
  let conductor: Conductor | undefined;

  const settings = {
    defaultModel: config.defaultModel,
    modelAllow: config.modelAllow,
    modelBlock: config.modelBlock,
    fallbackModels: config.fallbackModels,
    retryTimeoutS: config.retryTimeoutS,
  };

  async function open(): Promise<Conductor> {
    if (config.opencodeUrl) {
      return new Conductor({ url: config.opencodeUrl, password: config.opencodePassword, username: config.opencodeUsername, directory: config.directory, ...settings });
    }
    started = await spawnOpencode({ cwd: config.directory ?? process.cwd() }).catch((error: unknown) => {
      const binary = resolveOpencodeBinary();
      throw new Error(
        `No opencode server is configured and starting one (${binary} serve) failed: ${(error as Error).message}. ` +
          "Install opencode (npm i -g opencode-ai) or start one yourself (`opencode serve --port 4096`) and set OPENCODE_URL (and OPENCODE_PASSWORD).",
      );
    });
    return new Conductor({ url: started.url, password: started.password, directory: config.directory, ...settings });
  }

  return {
    conductor() {
      pending ??= open().then(
        (c) => (conductor = c),
        (error: unknown) => {
          pending = undefined; // let the next call try again
          throw error;
        },
      );
      return pending;
    },
    secrets: () => (started ? [started.password] : []),
    describe: () => (conductor ? { mode: started ? "auto-started" : "url", url: conductor.client.url } : { mode: "not connected" }),
    async close() {
      // An auto-start still under way would otherwise leave its server to the exit-time SIGKILL.
      await pending?.catch(() => undefined);
      conductor?.close();
      await started?.stop();
    },
  };
}
