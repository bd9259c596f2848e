// Starts `opencode serve` hermetically for e2e tests: temp HOME and XDG dirs, a temp project, the
// offline config of docs/opencode-behaviour.md §0.1 pointing at a scripted model, a password, a free
// port. stop() undoes all of it; the pid registry lets the global teardown catch a forgotten stop.
// The binary is the pinned one unless OPENCODE_BIN (or the `binary` option) names another release.
import { mkdirSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { resolveOpencodeBinary, spawnOpencode, type SpawnedOpencode } from "../../src/client/spawn.js";
import { deepMerge } from "../../src/core/engine/inline-config.js";
import { createProjectDir } from "./project-dir.js";
import { registerPid, registerRoot, unregisterPid, unregisterRoot } from "./registry.js";
import { startScriptedModel, type ScriptedModel } from "./scripted-model.js";

export interface StartOpencodeOptions {
  /** Model server to use; default: a fresh one, closed by stop(). */
  model?: ScriptedModel;
  /** Make the project a git repo with one commit. */
  gitInit?: boolean;
  /** Written as the config's `permission` (e.g. `{ bash: "ask" }`). */
  permission?: Record<string, unknown>;
  /** Deep-merged over the default config (objects merge, anything else replaces). */
  config?: Record<string, unknown>;
  /** Extra environment for the server, over the minimal one. */
  env?: Record<string, string>;
  /** Server password; default: a random one. */
  password?: string;
  /** The opencode binary; default: `OPENCODE_BIN`, else the pinned one (resolveOpencodeBinary). */
  binary?: string;
}

export interface TestOpencode {
  /** `http://127.0.0.1:PORT` */
  url: string;
  username: string;
  password: string;
  /** Value for the `authorization` header (Basic). */
  authorization: string;
  /** The project directory the server started in (real path). */
  directory: string;
  /** Temp root holding `home/`, `project/` and any {@link makeProjectDir} dirs. */
  root: string;
  home: string;
  model: ScriptedModel;
  pid: number;
  /** Server output so far (password scrubbed), for diagnostics. */
  output(): string;
  /** Stop the server, close an owned model, remove the temp root. Safe to call twice. */
  stop(): Promise<void>;
  /** SIGKILL the server (and its process group), as a crash would; resolves once it is gone. */
  kill(): Promise<void>;
  /** Start the server again on the same port, with the same home, project and password. */
  restart(): Promise<void>;
}

type Json = Record<string, unknown>;

export function offlineConfig(baseURL: string, options: Pick<StartOpencodeOptions, "permission" | "config"> = {}): Json {
  const config: Json = {
    $schema: "https://opencode.ai/config.json",
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        name: "Fake",
        // chunkTimeout turns a hung stream into a retryable error after 2 s (docs/opencode-behaviour.md §0.1).
        options: { baseURL, apiKey: "none", chunkTimeout: 2000 },
        models: { scripted: { name: "Scripted" }, backup: { name: "Backup" } },
      },
    },
    enabled_providers: ["fake"], // else the built-in Zen provider counts as connected
    model: "fake/scripted",
    small_model: "fake/scripted",
    share: "disabled",
    autoupdate: false,
    ...(options.permission ? { permission: options.permission } : {}),
  };
  return options.config ? deepMerge(config, options.config) : config;
}

/**
 * HOME, the XDG dirs and TMPDIR of a process, all inside `home` (TMPDIR is created here: opencode
 * unpacks 4-14 MB of native libraries into it at every start, which must go with the home, never into
 * the system temp dir).
 */
export function xdg(home: string) {
  const tmp = join(home, "tmp");
  mkdirSync(tmp, { recursive: true });
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    TMPDIR: tmp,
    BUN_TMPDIR: tmp, // what older Bun runtimes (opencode 1.1.11) read instead of TMPDIR
  };
}

/** The environment of an offline opencode with its own home: no registry, no models.dev fetch. */
export function offlineEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    ...xdg(home),
    // A closed port: opencode's background plugin install must not reach a registry.
    npm_config_registry: "http://127.0.0.1:9/",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
  };
}

export async function startOpencode(options: StartOpencodeOptions = {}): Promise<TestOpencode> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "occ-test-")));
  registerRoot(root);
  let model: ScriptedModel | undefined;
  let server: SpawnedOpencode | undefined;
  const ownsModel = options.model === undefined;
  const cleanup = async () => {
    try {
      await server?.stop();
    } finally {
      if (server) unregisterPid(server.pid);
      if (ownsModel) await model?.close();
      await rm(root, { recursive: true, force: true, maxRetries: 3 });
      unregisterRoot(root);
    }
  };

  try {
    model = options.model ?? (await startScriptedModel());
    const home = join(root, "home");
    const env = offlineEnv(home);
    await mkdir(join(env.XDG_CONFIG_HOME!, "opencode"), { recursive: true });
    await writeFile(join(env.XDG_CONFIG_HOME!, "opencode", "opencode.json"), JSON.stringify(offlineConfig(model.baseURL, options), null, 2));
    const directory = await createProjectDir(root, "project", { gitInit: options.gitInit, home });

    const binary = options.binary ?? resolveOpencodeBinary();
    const spawnOptions = { binary, cwd: directory, ...(options.password ? { password: options.password } : {}), env: { ...env, ...options.env } };
    server = await spawnOpencode(spawnOptions);
    // The registry checks the command line for this before it kills (pids get reused).
    registerPid(server.pid, basename(binary), root);

    const first = server;
    let stopping: Promise<void> | undefined;
    return {
      url: first.url,
      username: first.username,
      password: first.password,
      authorization: `Basic ${Buffer.from(`${first.username}:${first.password}`).toString("base64")}`,
      directory,
      root,
      home,
      model,
      get pid() {
        return server!.pid;
      },
      output: () => server!.output(),
      stop: () => (stopping ??= cleanup()),
      kill: async () => {
        process.kill(-server!.supervisorPid, "SIGKILL");
        await server!.exited;
        unregisterPid(server!.pid);
      },
      restart: async () => {
        server = await spawnOpencode({ ...spawnOptions, password: first.password, port: first.port });
        registerPid(server.pid, basename(binary), root);
      },
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** Another project directory under the same temp root, for multi-directory tests. */
export async function makeProjectDir(server: Pick<TestOpencode, "root" | "home">, name: string, options: { gitInit?: boolean } = {}): Promise<string> {
  return createProjectDir(server.root, name, { gitInit: options.gitInit, home: server.home });
}
