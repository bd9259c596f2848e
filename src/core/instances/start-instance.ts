// The start sequence of one private instance: read the binary's major version, build its
// credential-free environment, wrap it in the srt sandbox when asked, spawn `opencode serve` on a
// free port with a random password, and record it in the registry (stopping it again if that
// fails, so no unrecorded server is left). Split from manager.ts, which keeps the instances map,
// the reuse of a running instance and the idle reaper.
import { connect } from "../../client/connect.js";
import { cliInfo } from "../../client/service/cli.js";
import { resolveOpencodeBinary, spawnOpencode, randomPassword, type SpawnedOpencode } from "../../client/spawn.js";
import { processStartTime } from "../../client/discovery/processes.js";
import type { InstanceRegistry, InstanceRow } from "./registry.js";
import { prepareSandbox, resolveSrt, type Sandbox } from "./sandbox.js";
import { instanceEnvironment } from "./environment.js";
import { binaryOf } from "../engine/binary.js";
import type { InstanceManagerOptions, Managed } from "./types.js";
import type { PermissionRule } from "../policy/permissions.js";

function sandboxFor(options: InstanceManagerOptions, dir: string, env: NodeJS.ProcessEnv): Promise<Sandbox> {
  const srt = resolveSrt(options.srtBinary); // throws: a missing srt never runs unsandboxed
  return prepareSandbox({
    srt,
    stateDir: options.stateDir,
    directory: dir,
    env,
    hide: [options.stateDir], // the registry holds every instance password
    ...(options.sandboxAllowedDomains ? { allowedDomains: options.sandboxAllowedDomains } : {}),
  });
}

/**
 * How long a private server may take to listen. A ceiling for a start that hangs, not an
 * expectation: twelve worktree tasks' servers starting on a loaded 2-core machine (three at a time)
 * took more than 30 s each to print their "listening on" line.
 */
export const INSTANCE_START_TIMEOUT_MS = 120_000;

/** Starts and records the instance of `dir`; the caller tracks it (its `exited` is still the server's). */
export async function launchInstance(
  options: InstanceManagerOptions,
  registry: InstanceRegistry,
  dir: string,
  extraEnv?: Record<string, string>,
  taskRules?: PermissionRule[],
): Promise<Managed> {
  const binary = options.binary ?? resolveOpencodeBinary();
  const kind = binaryOf((await cliInfo(binary, options.env ?? process.env)).major);
  const major = kind.major;
  // A 2.x server for one task holds that task's rules in its config: the pre-release takes none per session.
  const rulesInConfig = kind.taskRulesInConfig && taskRules !== undefined;
  const env = { ...(await instanceEnvironment(options, dir, major, rulesInConfig ? taskRules : undefined)), ...extraEnv };
  const sandbox = options.sandbox === "srt" ? await sandboxFor(options, dir, env) : undefined;
  let server: SpawnedOpencode;
  try {
    server = await spawnOpencode({
      cwd: dir,
      env,
      password: randomPassword(),
      binary,
      startTimeoutMs: options.startTimeoutMs ?? INSTANCE_START_TIMEOUT_MS,
      ...(sandbox ? { port: sandbox.port, wrap: sandbox.wrap } : {}),
    });
  } catch (error) {
    await sandbox?.close();
    throw error;
  }
  if (sandbox) void server.exited.then(() => sandbox.close());
  const now = Date.now();
  const managed: Managed = {
    directory: dir,
    url: server.url,
    port: server.port,
    pid: server.pid,
    password: server.password,
    startedAt: new Date(now),
    major,
    ...(rulesInConfig ? { rulesInConfig } : {}),
    client: connect({ url: server.url, password: server.password, directory: dir }),
    exited: server.exited,
    server,
    ...(sandbox ? { sandbox } : {}),
    lastUsed: now,
    lastPersisted: now,
    holds: 0,
    unanswered: 0,
  };
  options.onSpawn?.(managed);
  const conductorStartTime = processStartTime(process.pid);
  const row: InstanceRow = {
    runtime: "opencode serve",
    sandbox: sandbox ? "srt" : "none",
    port: server.port,
    pid: server.pid,
    conductorPid: process.pid,
    ...(conductorStartTime !== undefined ? { conductorStartTime } : {}),
    directory: dir,
    startedAt: managed.startedAt.toISOString(),
    lastUsedAt: managed.startedAt.toISOString(),
    password: server.password,
    url: server.url,
    sessions: [],
  };
  try {
    await registry.add(row);
  } catch (error) {
    await server.stop();
    options.onExit?.(managed);
    throw error;
  }
  return managed;
}
