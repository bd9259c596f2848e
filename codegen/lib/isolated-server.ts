// Starts an opencode binary that cannot see or change the user's setup: a temp project dir,
// its own HOME and XDG dirs, no registry (the background plugin install fails fast), no models.dev
// fetch. `dispose()` stops it and removes every temp dir.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnOpencode, type SpawnedOpencode } from "../../src/client/spawn.js";

export interface IsolatedServer {
  server: SpawnedOpencode;
  dispose(): Promise<void>;
}

// Variables from the caller's shell that would point opencode at the user's own config.
const INHERITED_CONFIG = [
  "OPENCODE_CONFIG",
  "OPENCODE_CONFIG_CONTENT",
  "OPENCODE_CONFIG_DIR",
  "OPENCODE_SERVER_PASSWORD",
  "OPENCODE_SERVER_USERNAME",
  "NPM_CONFIG_REGISTRY",
];

export async function startIsolatedServer(binary: string): Promise<IsolatedServer> {
  const root = mkdtempSync(join(tmpdir(), "opencode-spec-"));
  const home = join(root, "home");
  const project = join(root, "project");
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of INHERITED_CONFIG) delete env[name];
  Object.assign(env, {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    npm_config_registry: "http://127.0.0.1:9/", // closed port: nothing leaves the machine
    OPENCODE_DISABLE_MODELS_FETCH: "1",
  });
  for (const dir of [project, env.XDG_CONFIG_HOME!, env.XDG_DATA_HOME!, env.XDG_STATE_HOME!, env.XDG_CACHE_HOME!]) {
    mkdirSync(dir, { recursive: true });
  }
  const cleanup = () => rmSync(root, { recursive: true, force: true });
  let server: SpawnedOpencode;
  try {
    server = await spawnOpencode({ cwd: project, binary, env });
  } catch (error) {
    cleanup();
    throw error;
  }
  return {
    server,
    dispose: async () => {
      try {
        await server.stop();
      } finally {
        cleanup();
      }
    },
  };
}
