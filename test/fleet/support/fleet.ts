// Workers of the fleet as separate processes (standing in for machines): each runs the built CLI's
// `worker` command against its own opencode with its own workspace. kill() is a SIGKILL, as a
// machine that dies; stop() a SIGTERM, as a scale-down.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI } from "../../support/mcp-client.js";
import type { TestOpencode } from "../../support/opencode.js";
import { registerPid, unregisterPid } from "../../support/registry.js";
import { scratchEnv } from "../../support/scratch-home.js";

export interface TestWorker {
  id: string;
  opencode: TestOpencode;
  workspace: string;
  pid: number;
  output(): string;
  /** Resolves once the worker's log has a line matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code once the process has exited by itself or been stopped. */
  exited: Promise<number | null>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export interface WorkerOptions {
  id: string;
  queueUrl: string;
  opencode: TestOpencode;
  concurrency?: number;
  roots?: string[];
  limits?: string[];
  /** BullMQ's job lock in seconds (default 4, quick hand-overs); null: the worker's own default (30). */
  lockS?: number | null;
  /** --reattach-s: how long an earlier attempt's opencode may not answer before a re-run. */
  reattachS?: number;
  /** --max-jobs: take this many jobs (tasks and walks), then exit. */
  maxJobs?: number;
  /** --walks: workflow walks at once (the worker's default: 2). */
  walks?: number;
  /** OPENCODE_CONDUCTOR_QUEUE_PREFIX: a fleet of its own on the same Redis. */
  prefix?: string;
}

export async function startWorker(o: WorkerOptions): Promise<TestWorker> {
  const workspace = await mkdtemp(join(tmpdir(), `occ-ws-${o.id}-`));
  const args = [CLI, "worker", "--queue", o.queueUrl, "--workspace", workspace, "--id", o.id, "--concurrency", String(o.concurrency ?? 4)];
  if (o.lockS !== null) args.push("--lock-s", String(o.lockS ?? 4));
  if (o.reattachS !== undefined) args.push("--reattach-s", String(o.reattachS));
  if (o.maxJobs !== undefined) args.push("--max-jobs", String(o.maxJobs));
  if (o.walks !== undefined) args.push("--walks", String(o.walks));
  for (const r of o.roots ?? []) args.push("--root", r);
  for (const l of o.limits ?? []) args.push("--limit", l);
  const child: ChildProcess = spawn(process.execPath, args, {
    env: {
      ...scratchEnv(),
      OPENCODE_URL: o.opencode.url,
      OPENCODE_PASSWORD: o.opencode.password,
      ...(o.prefix ? { OPENCODE_CONDUCTOR_QUEUE_PREFIX: o.prefix } : {}),
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  registerPid(child.pid!, "cli.js", workspace);
  let log = "";
  const waiters = new Set<() => void>();
  child.stderr!.on("data", (chunk: Buffer) => {
    log += chunk.toString();
    for (const w of waiters) w();
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => (unregisterPid(child.pid!), r(code))));
  const waitFor = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(log);
        if (m) return done(() => resolve(m[0]));
        if (child.exitCode !== null) done(() => reject(new Error(`worker ${o.id} exited (${child.exitCode}):\n${log}`)));
      };
      const timer = setTimeout(() => done(() => reject(new Error(`worker ${o.id}: no ${pattern} within ${timeoutMs} ms:\n${log.slice(-3000)}`))), timeoutMs);
      const done = (f: () => void) => (clearTimeout(timer), waiters.delete(check), f());
      waiters.add(check);
      child.once("exit", check);
      check();
    });
  const w: TestWorker = {
    id: o.id,
    opencode: o.opencode,
    workspace,
    pid: child.pid!,
    output: () => log,
    waitFor,
    exited,
    async kill() {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      await exited;
      clearTimeout(timer);
      await rm(workspace, { recursive: true, force: true });
    },
  };
  await waitFor(/worker \S+ ready/, 60_000);
  return w;
}
