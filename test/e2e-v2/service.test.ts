// The opencode 2.x background service, for real: zero-config discovery through its discovery file
// (written here for a running 2.x server, in a temp XDG state dir, never the user's), stale files
// skipped with their reason, OPENCODE_URL still first, and auto-start through `opencode service
// start` of the 2.x CLI, whose own discovery file the conductor then reads. Facts:
// docs/opencode-2x-behaviour.md, "The background service".
import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { autoStart } from "../../src/client/autostart.js";
import { discoverConnection } from "../../src/client/discovery/choose-server.js";
import { isProcessAlive } from "../../src/client/discovery/processes.js";
import { findService } from "../../src/client/service/discover.js";
import { cliInfo } from "../../src/client/service/cli.js";
import { freePort } from "../../src/client/spawn.js";
import { connectV2 } from "../../src/client/v2/index.js";
import { loadConfig } from "../../src/config.js";
import { createConnection } from "../../src/mcp/opencode-connection.js";
import { offlineEnv, type TestOpencode } from "../support/opencode.js";
import { prepareOpencode2, startOpencode2 } from "../support/opencode2.js";
import { registerPid, registerRoot, unregisterPid, unregisterRoot } from "../support/registry.js";

const run = promisify(execFile);

let server: TestOpencode;
let root: string;
const stateHome = () => join(root, "state");
const serviceFile = () => join(stateHome(), "opencode", "service.json");

async function writeServiceFile(content: Record<string, unknown>, file = serviceFile()): Promise<void> {
  await mkdir(join(stateHome(), "opencode"), { recursive: true });
  await writeFile(file, JSON.stringify(content), { mode: 0o600 });
  await chmod(file, 0o600);
}

const registration = () => ({ id: "3f0c2a7e-5d1b-4c8e-9a60-7b2d9e4f1c11", url: server.url, pid: server.pid, password: server.password });

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "occ-service-"));
  registerRoot(root);
  server = await startOpencode2();
});
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
  unregisterRoot(root);
});

describe("a discovery file for a running 2.x server", () => {
  it("is found with zero configuration, and the connection works with the password from the file", async () => {
    const identity = await connectV2({ url: server.url, password: server.password }).then((c) => c.identity);
    await writeServiceFile({ ...registration(), version: identity.version });
    const found = await discoverConnection({ env: { XDG_STATE_HOME: stateHome(), HOME: root } });
    expect(found.connection).toEqual({ url: server.url, password: server.password, source: "service", pid: server.pid, version: identity.version });
    const step = found.steps.find((s) => s.step === "service")!;
    expect(step.result).toBe(`using the opencode ${identity.version} background service at ${server.url}/ (pid ${server.pid}) from ${serviceFile()}`);
    expect(JSON.stringify(found.steps)).not.toContain(server.password);
    // Used, not just found: a session made through it.
    const client = await connectV2({ url: found.connection!.url, password: found.connection!.password });
    const created = (await client.request("session.create", { body: { title: "via the service file" } })) as { data: { id: string } };
    expect(created.data.id).toMatch(/^ses_/);
  });

  it("OPENCODE_URL still comes first", async () => {
    await writeServiceFile(registration());
    const found = await discoverConnection({ env: { XDG_STATE_HOME: stateHome(), HOME: root, OPENCODE_URL: "http://127.0.0.1:9" } });
    expect(found.connection).toMatchObject({ url: "http://127.0.0.1:9", source: "env" });
    expect(found.steps.map((s) => s.step)).toEqual(["options", "env"]);
  });

  it("is stale when the server at its URL is another process, or refuses its password: skipped with the reason, never the password", async () => {
    await writeServiceFile({ ...registration(), pid: process.pid });
    let found = await findService({ env: { XDG_STATE_HOME: stateHome() } });
    expect(found.live).toBeUndefined();
    expect(found.checks[0]!.result).toBe(
      `stale: ${server.url} (pid ${process.pid}, with a password): the server at that URL is pid ${server.pid}, not the registered one`,
    );

    await writeServiceFile({ ...registration(), password: "not-the-password" });
    found = await findService({ env: { XDG_STATE_HOME: stateHome() } });
    expect(found.checks[0]!.result).toBe(`stale: ${server.url} (pid ${server.pid}, with a password): refused the password in the file`);

    await writeServiceFile({ ...registration(), version: "2.0.999" });
    found = await findService({ env: { XDG_STATE_HOME: stateHome() } });
    expect(found.checks[0]!.result).toMatch(
      new RegExp(`^stale: ${server.url} \\(pid ${server.pid}, 2\\.0\\.999, with a password\\): the server there is 2\\.`),
    );

    // Discovery goes on to the scan, and says why the file was skipped.
    const discovered = await discoverConnection({ env: { XDG_STATE_HOME: stateHome(), HOME: root }, excludePids: [server.pid] });
    expect(discovered.steps.find((s) => s.step === "service")?.result).toBe(`${serviceFile()}: ${found.checks[0]!.result}`);
    expect(discovered.steps.at(-1)?.step).toBe("scan");
    expect(JSON.stringify(discovered)).not.toContain(server.password);
  });

  it("a later channel's file is used when service.json is stale", async () => {
    await writeServiceFile({ url: "http://127.0.0.1:9", pid: 999_999_999 });
    await writeServiceFile(registration(), join(stateHome(), "opencode", "service-local.json"));
    const found = await discoverConnection({ env: { XDG_STATE_HOME: stateHome(), HOME: root } });
    expect(found.connection).toMatchObject({ url: server.url, source: "service", pid: server.pid });
    expect(found.steps.find((s) => s.step === "service")?.result).toContain(
      `; skipped ${serviceFile()}: stale: http://127.0.0.1:9 (pid 999999999, no password): pid 999999999 is not running`,
    );
    await rm(join(stateHome(), "opencode", "service-local.json"));
  });
});

/** Runs `fn` with these process environment variables (this test file runs in its own worker). */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(saved);
  }
}

describe("the MCP server's connection (what oc_status reports)", () => {
  it("uses the service of the discovery file with zero configuration, and logs each step with OPENCODE_CONDUCTOR_DEBUG", async () => {
    await writeServiceFile(registration());
    const lines: string[] = [];
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => lines.push(String(chunk)) > 0);
    await withEnv({ XDG_STATE_HOME: stateHome(), OPENCODE_URL: undefined, OPENCODE_PASSWORD: undefined }, async () => {
      const connection = createConnection(loadConfig({ OPENCODE_CONDUCTOR_STATE_DIR: join(root, "conductor-state"), OPENCODE_CONDUCTOR_DEBUG: "1" }));
      try {
        const conductor = await connection.conductor();
        expect(conductor.client.url).toBe(server.url);
        const described = connection.describe();
        expect(described).toMatchObject({ mode: "discovered", url: server.url });
        expect(described.steps.map((s) => s.step)).toEqual(["options", "env", "service"]);
        expect(described.steps[2]!.result).toMatch(/^using the opencode 2\.\S+ background service at /);
        expect(JSON.stringify(described)).not.toContain(server.password);
        // The file's password is scrubbed from answers like the passwords of servers started here.
        expect(connection.secrets()).toContain(server.password);
      } finally {
        await connection.close();
      }
    }).finally(() => stderr.mockRestore());
    const logged = lines.filter((l) => l.startsWith("opencode-conductor: discovery: "));
    expect(logged.map((l) => l.split(":")[2]!.trim())).toEqual(["options", "env", "service"]);
    expect(logged.join("")).not.toContain(server.password);
  });
});

describe("auto-start with a 2.x CLI", () => {
  it("runs `opencode service start`, reads the discovery file the service wrote (mode 0600), and leaves the service to `opencode service stop`", async () => {
    const { binary } = await prepareOpencode2();
    const home = join(root, "cli-home");
    const env = offlineEnv(home);
    // Even `--version` writes a log under the CLI's XDG data dir: never the user's.
    const cli = await cliInfo(binary, env);
    expect(cli).toMatchObject({ major: 2, hasService: true });

    // The service's port comes from the CLI's own settings file (per channel): a free one, not 49374/5.
    const port = await freePort();
    await mkdir(join(env.XDG_CONFIG_HOME!, "opencode"), { recursive: true });
    for (const name of ["service.json", "service-local.json"])
      await writeFile(join(env.XDG_CONFIG_HOME!, "opencode", name), JSON.stringify({ port }), { mode: 0o600 });
    const project = join(root, "project");
    await mkdir(project, { recursive: true });

    let pid: number | undefined;
    try {
      // Through the MCP server's connection, with OPENCODE_BIN naming the 2.x CLI and nothing running.
      const started = await withEnv({ ...env, OPENCODE_BIN: binary, OPENCODE_URL: undefined, OPENCODE_PASSWORD: undefined }, async () => {
        const connection = createConnection(loadConfig({ OPENCODE_CONDUCTOR_STATE_DIR: join(root, "autostart-state"), OPENCODE_CONDUCTOR_DIRECTORY: project }));
        try {
          const conductor = await connection.conductor();
          const described = connection.describe();
          expect(described.mode).toBe("auto-started");
          expect(described.steps.map((s) => s.step)).toEqual(["options", "env", "service", "scan", "auto-start"]);
          expect(described.steps[2]!.result).toBe(`no opencode 2.x service file in ${join(env.XDG_STATE_HOME!, "opencode")}`);
          expect(conductor.client.url).toBe(`http://127.0.0.1:${port}`);
          return { note: described.steps[4]!.result, url: conductor.client.url };
        } finally {
          // Closing the conductor leaves the shared service running.
          await connection.close();
        }
      });
      const found = await findService({ env });
      if (!found.live) throw new Error(`no live service after auto-start: ${JSON.stringify(found.checks)}`);
      const r = found.live.registration;
      registerPid(r.pid, "serve --service", root);
      pid = r.pid;
      expect(r.url).toBe(started.url);
      expect(isProcessAlive(r.pid)).toBe(true);
      expect(started.note).toContain(`background service (${binary} service start) at http://127.0.0.1:${port} (pid ${r.pid}`);
      expect(started.note).not.toContain(r.password!);
      expect(((await stat(found.live.file)).mode & 0o777).toString(8)).toBe("600");
      // autoStart() on its own reuses the running service.
      const again = await autoStart({ cwd: project, binary, env });
      expect(again.kind === "service" && again.service.registration.pid).toBe(r.pid);
      // Zero-config discovery in the same environment finds what was started.
      const discovered = await discoverConnection({ env });
      expect(discovered.connection).toMatchObject({ url: r.url, password: r.password, source: "service", pid: r.pid });
    } finally {
      // Also when an assertion failed: the service must not outlive the test.
      await run(binary, ["service", "stop"], { env, timeout: 30_000 });
    }
    if (pid !== undefined) unregisterPid(pid);
    expect(isProcessAlive(pid!)).toBe(false);
    expect(await readdir(join(env.XDG_STATE_HOME!, "opencode")).then((names) => names.filter((n) => n.startsWith("service")))).toEqual([]);
  });
});
