// Private instances against the real opencode and the scripted model: a task runs on an instance
// the manager started, the registry (0600) holds its password while list() and oc_instances never
// show it, a second acquire reuses it, stopAll leaves no process, a short TTL reaps it only once no
// session is busy, and cleanStale stops an instance whose conductor died.
import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isProcessAlive } from "../../../src/client/discovery/processes.js";
import { resolveOpencodeBinary, spawnOpencode } from "../../../src/client/spawn.js";
import type { Config } from "../../../src/config.js";
import { Conductor } from "../../../src/core/conductor.js";
import { InstanceRegistry } from "../../../src/core/instances/registry.js";
import { InstanceManager } from "../../../src/core/instances/manager.js";
import { type Instance } from "../../../src/core/instances/types.js";
import { instancesTool } from "../../../src/mcp/tools/oc_instances.js";
import type { ToolContext } from "../../../src/mcp/tool-def.js";
import { offlineConfig, offlineEnv } from "../../support/opencode.js";
import { createProjectDir } from "../../support/project-dir.js";
import { registerPid, registerRoot, unregisterPid, unregisterRoot } from "../../support/registry.js";
import { startScriptedModel, text, toolCall, type ScriptedModel } from "../../support/scripted-model.js";

const BINARY_NAME = basename(resolveOpencodeBinary());
let root: string;
let home: string;
let stateDir: string;
let model: ScriptedModel;
let env: NodeJS.ProcessEnv;
const managers: InstanceManager[] = [];
// Tests that start a server and run a turn: generous ceilings for a loaded 2-core machine.
const SLOW = 240_000;

function manager(ttlS: number): InstanceManager {
  const m = new InstanceManager({
    stateDir,
    ttlS,
    env,
    configFor: () => offlineConfig(model.baseURL),
    // The harness's pid registry: a forgotten instance fails the run (global teardown).
    onSpawn: (i) => registerPid(i.pid, BINARY_NAME, root),
    onExit: (i) => unregisterPid(i.pid),
  });
  managers.push(m);
  return m;
}

/** Resolves with the exit, or fails after `ms` (a ceiling, not a wait). */
function exitWithin(instance: Pick<Instance, "exited" | "pid">, ms: number): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined;
  const ceiling = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`instance pid ${instance.pid} still running after ${ms} ms`)), ms);
  });
  return Promise.race([instance.exited, ceiling]).finally(() => clearTimeout(timer));
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "occ-inst-")));
  registerRoot(root);
  home = join(root, "home");
  stateDir = join(root, "state");
  model = await startScriptedModel();
  env = {
    ...offlineEnv(home),
    GH_TOKEN: "must-not-reach-the-instance",
  };
  await mkdir(home, { recursive: true });
});

afterAll(async () => {
  await Promise.all(managers.map((m) => m.stopAll()));
  await model?.close();
  await rm(root, { recursive: true, force: true, maxRetries: 3 });
  unregisterRoot(root);
});

describe("private instances (e2e)", () => {
  let main: InstanceManager;
  let project: string;
  let first: Instance;

  it(
    "acquire starts a guarded instance; a task on it writes a file",
    async () => {
      main = manager(600);
      project = await createProjectDir(root, "project", { home });
      first = await main.acquire(project);
      expect(first).toMatchObject({ directory: project, url: `http://127.0.0.1:${first.port}` });
      expect(isProcessAlive(first.pid)).toBe(true);
      // The instance's environment: guard config injected, credentials gone, git unable to authenticate.
      const childEnv = readFileSync(`/proc/${first.pid}/environ`, "utf8").split("\0");
      expect(childEnv).toContain("GIT_TERMINAL_PROMPT=0");
      expect(childEnv.some((e) => e.startsWith("GH_TOKEN="))).toBe(false);
      expect(childEnv.some((e) => e.startsWith("OPENCODE_PERMISSION="))).toBe(true);

      const conductor = new Conductor({ url: first.url, password: first.password, directory: first.directory });
      try {
        const file = join(project, "out.txt");
        model.queue(toolCall("write", { filePath: file, content: "from the instance\n" }), text("Wrote out.txt."));
        const r = await conductor.delegate({ task: "write out.txt", permissions: main.sessionRules() });
        expect(r).toMatchObject({ status: "done", answer: "Wrote out.txt." });
        expect(readFileSync(file, "utf8")).toBe("from the instance\n");
        await main.recordSession(project, { id: r.sessionId, title: "write out.txt", model: r.model ?? "fake/scripted" });
      } finally {
        conductor.close();
      }
    },
    SLOW,
  );

  it("list() and oc_instances show it without the password; instances.json (0600) has it", async () => {
    const listed = await main.list();
    expect(listed).toEqual([
      expect.objectContaining({
        pid: first.pid,
        url: first.url,
        directory: project,
        runtime: "opencode serve",
        sandbox: "none",
        conductorPid: process.pid,
        owned: true,
        sessions: [expect.objectContaining({ title: "write out.txt", fallbacks: [] })],
      }),
    ]);
    expect(listed[0]!.idleS).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(listed)).not.toContain(first.password);

    const registry = new InstanceRegistry(stateDir);
    expect(statSync(registry.path).mode & 0o777).toBe(0o600);
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(registry.path, "utf8")).instances[0].password).toBe(first.password);

    const tool = instancesTool(() => main);
    const ctx = {
      config: { stateDir, instanceTtlS: 600 } as Config,
      signal: new AbortController().signal,
      progress: () => undefined,
      log: () => undefined,
      conductor: () => Promise.reject(new Error("unused")),
    } satisfies ToolContext;
    const answer = await tool.run({ action: "list" }, ctx);
    expect(answer.data.instances).toEqual([expect.objectContaining({ pid: first.pid, url: first.url, directory: project, owned: true })]);
    expect(answer.text).toContain(`pid ${first.pid}  ${first.url}  ${project}  idle `);
    expect(answer.text + JSON.stringify(answer.data)).not.toContain(first.password);

    const attach = main.attachCommand(first, "ses_abc");
    expect(attach.command).toBe(`opencode attach ${first.url} --session ses_abc`);
    expect(attach.env.OPENCODE_SERVER_PASSWORD).toBe(first.password);
    expect(attach.shell).not.toContain(first.password);
    expect(attach.shell).toContain(registry.path);
  });

  it("a second acquire for the same directory reuses the instance", async () => {
    const again = await main.acquire(project);
    expect(again.pid).toBe(first.pid);
    expect((await main.list()).filter((r) => r.owned)).toHaveLength(1);
  });

  it("stopAll() leaves no process and no row", async () => {
    await main.stopAll();
    expect(isProcessAlive(first.pid)).toBe(false);
    expect(await new InstanceRegistry(stateDir).read()).toEqual([]);
  });

  it(
    "a short TTL reaps an idle instance, but not while a session is busy",
    async () => {
      const short = manager(2);
      const dir = await createProjectDir(root, "ttl", { home });
      const instance = await short.acquire(dir);
      // Held while the task is set up: model lookup and the first prompt of a fresh server take
      // seconds before the session turns busy (more than this TTL on a loaded machine).
      const release = short.hold(instance.directory);
      const conductor = new Conductor({ url: instance.url, password: instance.password, directory: instance.directory });
      try {
        model.queue(text("slow answer", { delayMs: 5_000 }));
        const started = await conductor.delegate({ task: "answer slowly", permissions: short.sessionRules(), wait: false });
        await model.waitForRequests(1, { sessionId: started.sessionId, kind: "chat" }); // the turn runs
        release();
        // The turn outlasts the TTL: only the busy session keeps the server alive now.
        const r = await conductor.wait(started.sessionId);
        expect(r).toMatchObject({ status: "done", answer: "slow answer" });
        expect(isProcessAlive(instance.pid)).toBe(true);
      } finally {
        release();
        conductor.close();
      }
      await exitWithin(instance, 60_000);
      expect(await new InstanceRegistry(stateDir).read()).toEqual([]);
      expect(await short.list()).toEqual([]);
    },
    SLOW,
  );

  it(
    "cleanStale() stops an instance whose conductor died, and removes its row",
    async () => {
      const dir = await createProjectDir(root, "stale", { home });
      // A live instance of a conductor that no longer exists (its pid is that of an exited process).
      const server = await spawnOpencode({ cwd: dir, env: { ...env, OPENCODE_CONFIG_CONTENT: JSON.stringify(offlineConfig(model.baseURL)) } });
      registerPid(server.pid, BINARY_NAME, root);
      try {
        const gone = spawn(process.execPath, ["-e", ""]);
        const deadPid = gone.pid!;
        await new Promise((resolve) => gone.once("exit", resolve));
        const registry = new InstanceRegistry(stateDir);
        await registry.add({
          runtime: "opencode serve",
          sandbox: "none",
          port: server.port,
          pid: server.pid,
          conductorPid: deadPid,
          directory: dir,
          startedAt: new Date().toISOString(),
          password: server.password,
          url: server.url,
          sessions: [],
        });

        const result = await manager(600).cleanStale();
        expect(result.killed).toEqual([server.pid]);
        expect(result.removed).toEqual([expect.objectContaining({ pid: server.pid, conductorPid: deadPid })]);
        expect(JSON.stringify(result)).not.toContain(server.password);
        await exitWithin(server, 30_000);
        expect(await registry.read()).toEqual([]);
      } finally {
        await server.stop();
        unregisterPid(server.pid);
      }
    },
    SLOW,
  );
});
