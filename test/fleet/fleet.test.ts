// The fleet against real parts: redis-server (AOF on) on a free loopback port, two opencode
// servers with the scripted model, two worker processes with their own workspaces (two machines),
// and the built MCP server with OPENCODE_CONDUCTOR_QUEUE. Every outcome is compared with the
// session as the worker's opencode recorded it.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import { TaskQueue } from "../../src/core/queue/client.js";
import { rootQueue } from "../../src/core/queue/names.js";
import type { QueuedSummary } from "../../src/core/queue/outcome.js";
import { startMcp, type McpSession } from "../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../support/opencode.js";
import { hang, startScriptedModel, text, times, toolCall, type ScriptedModel } from "../support/scripted-model.js";
import { startWorker, type TestWorker } from "./support/fleet.js";
import { startRedis, type TestRedis } from "./support/redis.js";
import { recorded } from "./support/truth.js";

const SLOW = { provider: { fake: { models: { slow: { name: "Slow" }, steady: { name: "Steady" } } } } };

let redis: TestRedis;
let model: ScriptedModel;
let servers: TestOpencode[] = [];
let workers: TestWorker[] = [];
let queue: TaskQueue;

const serverOf = (workerId: string | undefined) => {
  const w = workers.find((x) => x.id === workerId);
  if (!w) throw new Error(`no worker ${workerId}`);
  return w.opencode;
};

async function expectTruthful(r: QueuedSummary, prompt: string) {
  expect(r.status).toBe("done");
  const rec = await recorded(serverOf(r.task.worker), r.sessionId, r.task.attempts.at(-1)?.directory);
  expect(rec.prompt).toBe(prompt);
  expect(rec.completed).toBe(true);
  expect(r.answer).toBe(rec.answer);
}

beforeAll(async () => {
  redis = await startRedis();
  model = await startScriptedModel();
  servers = await Promise.all([startOpencode({ model, config: SLOW, gitInit: true }), startOpencode({ model, config: SLOW, gitInit: true })]);
  workers = await Promise.all([
    startWorker({ id: "wA", queueUrl: redis.url, opencode: servers[0]!, concurrency: 4 }),
    startWorker({ id: "wB", queueUrl: redis.url, opencode: servers[1]!, concurrency: 4 }),
  ]);
  queue = new TaskQueue({ url: redis.url });
}, 120_000);

afterAll(async () => {
  await queue?.close();
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(servers.map((s) => s.stop()));
  await model?.close();
  await redis?.stop();
}, 120_000);

describe("a fleet of two workers on a real Redis", () => {
  it("runs a 24-task oc_delegate_parallel from the MCP server on both workers, truthful and in input order", async () => {
    const mcp = await startMcp({ OPENCODE_URL: servers[0]!.url, OPENCODE_PASSWORD: servers[0]!.password, OPENCODE_CONDUCTOR_QUEUE: redis.url });
    try {
      const tasks = Array.from({ length: 24 }, (_, i) => ({ task: `fleet task ${i + 1}`, title: `t${i + 1}`, permissions: "auto" }));
      const res = await mcp.call("oc_delegate_parallel", { tasks, request_id: "batch-24", concurrency: 24 }, { timeoutMs: 300_000 });
      expect(res.isError, res.text).toBe(false);
      // With a queue, session_id is the task id (what oc_wait takes); task.session_id is the worker's session.
      const results = res.data.results as Array<{
        index: number;
        status: string;
        session_id: string;
        answer: string;
        task: { worker: string; session_id: string };
      }>;
      expect(results.map((r) => r.index)).toEqual(tasks.map((_, i) => i));
      expect(new Set(results.map((r) => r.task.worker))).toEqual(new Set(["wA", "wB"]));
      for (const [i, r] of results.entries()) {
        const full = await queue.read(`batch-24.${i + 1}`);
        expect(r.session_id).toBe(`batch-24.${i + 1}`);
        expect(full.sessionId).toBe(r.task.session_id);
        expect(r.answer).toBe(full.answer);
        await expectTruthful(full, `fleet task ${i + 1}`);
      }
      // oc_status shows the queue and both workers.
      const status = await mcp.call("oc_status", {});
      const q = status.data.queue as { counts: { completed: number }; workers: Array<{ id: string; host: string; concurrency: number; heartbeat: string }> };
      expect(q.counts.completed).toBeGreaterThanOrEqual(24);
      expect(q.workers.map((w) => w.id).sort()).toEqual(["wA", "wB"]);
      expect(q.workers[0]!.concurrency).toBe(4);
    } finally {
      await mcp.close();
    }
  });

  it("hands the task of a SIGKILLed worker to the other one: 2 attempts, the first lost with its session id", async () => {
    model.for("slow").queue(hang(), text("recovered after a lost worker"));
    const started = await queue.delegate({ task: "survive a dead worker", model: "fake/slow", wait: false, requestId: "kill-me" });
    const first = await model.waitForRequests(1, { model: "slow", timeoutMs: 60_000 });
    // The lost attempt's session keeps hanging on its opencode (its retries too), as a dead machine's would.
    model.forSession(first[0]!.sessionId!).queue(times(50, hang()));
    const running = await queue.read(started.task.id);
    // What the KEDA ScaledObject reads (deploy/k8s): BullMQ's active list of the shared queue.
    expect(await queue.redis.type("occ:tasks:active")).toBe("list");
    expect(await queue.redis.lrange("occ:tasks:active", 0, -1)).toContain(started.task.id);
    const victim = workers.find((w) => w.id === running.task.attempts[0]!.worker)!;
    const survivor = workers.find((w) => w !== victim)!;
    await victim.kill();
    const r = await queue.wait(started.task.id, { timeoutMs: 120_000 });
    expect(r.task.attempts.map((a) => [a.worker, a.outcome])).toEqual([
      [victim.id, "lost"],
      [survivor.id, "finished"],
    ]);
    expect(r.task.attempts[0]!.sessionId).toBe(first[0]!.sessionId);
    expect(r.task.attempts[0]!.reason).toMatch(/lock on the job expired.*review it/);
    expect(r.answer).toBe("recovered after a lost worker");
    await expectTruthful(r, "survive a dead worker");
    // A new worker takes the dead one's place (same opencode) for the tests that follow.
    await victim.stop();
    workers[workers.indexOf(victim)] = await startWorker({ id: `${victim.id}2`, queueUrl: redis.url, opencode: victim.opencode });
  });

  it("loses no task when Redis restarts mid-batch (AOF)", async () => {
    model.for("steady").queue(times(6, text("steady answer", { delayMs: 1500 })));
    const before = model.requests.filter((r) => r.model === "steady").length;
    const batch = queue.parallel(
      Array.from({ length: 6 }, (_, i) => ({ task: `steady ${i + 1}`, model: "fake/steady" })),
      { requestId: "redis-restart" },
    );
    await model.waitForRequests(before + 2, { model: "steady", timeoutMs: 60_000 });
    await redis.restart();
    const r = await batch;
    expect(r.results.map((x) => x.status)).toEqual(Array(6).fill("done"));
    for (const i of r.results.keys()) await expectTruthful(await queue.read(`redis-restart.${i + 1}`), `steady ${i + 1}`);
  });

  it("answers oc_wait on a batch from a new MCP server after the first was SIGKILLed mid-batch", async () => {
    model.for("steady").queue(times(4, text("slow batch answer", { delayMs: 2000 })));
    const env = { OPENCODE_URL: servers[1]!.url, OPENCODE_PASSWORD: servers[1]!.password, OPENCODE_CONDUCTOR_QUEUE: redis.url };
    const first = await startMcp(env);
    const tasks = Array.from({ length: 4 }, (_, i) => ({ task: `orphaned ${i + 1}`, model: "fake/steady" }));
    const before = model.requests.filter((r) => r.model === "steady").length;
    const pending = first.call("oc_delegate_parallel", { tasks, request_id: "mcp-dies" }, { timeoutMs: 120_000 }).catch((e: Error) => e);
    await model.waitForRequests(before + 1, { model: "steady", timeoutMs: 60_000 });
    process.kill(first.transport.pid!, "SIGKILL");
    await pending;
    const second: McpSession = await startMcp(env);
    try {
      const res = await second.call("oc_wait", { session_id: "mcp-dies" }, { timeoutMs: 120_000 });
      expect(res.isError, res.text).toBe(false);
      const results = res.data.results as Array<{ index: number; status: string }>;
      expect(results.map((r) => [r.index, r.status])).toEqual(tasks.map((_, i) => [i, "done"]));
      for (const [i] of tasks.entries()) await expectTruthful(await queue.read(`mcp-dies.${i + 1}`), `orphaned ${i + 1}`);
    } finally {
      await second.close();
      await first.close().catch(() => undefined);
    }
  });

  it("runs a repo task in a fresh worktree and returns the patch; the worker pushes conductor/<task-id>", async () => {
    const root = await mkdtemp(join(tmpdir(), "occ-repo-"));
    try {
      const bare = join(root, "origin.git");
      const seed = join(root, "seed");
      const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" });
      git(root, "init", "--quiet", "--bare", "-b", "main", bare);
      git(root, "init", "--quiet", "-b", "main", seed);
      await writeFile(join(seed, "README.md"), "seed\n");
      git(seed, "add", ".");
      git(seed, "commit", "--quiet", "-m", "seed");
      git(seed, "push", "--quiet", bare, "main");
      model
        .for("scripted")
        .queue(toolCall("bash", { command: "echo hello from the agent > hello.txt", description: "write hello.txt" }), text("wrote hello.txt"));
      const r = await queue.delegate({ task: "add hello.txt", repo: { url: bare, ref: "main", push: true }, requestId: "repo-task" });
      expect(r.status, JSON.stringify(r.error)).toBe("done");
      expect(r.task.repo?.files).toEqual(["hello.txt"]);
      expect(r.task.repo?.patch).toContain("+hello from the agent");
      expect(r.task.repo?.branch).toBe("conductor/repo-task");
      expect(r.task.repo?.pushed).toBe(true);
      expect(git(bare, "show", "conductor/repo-task:hello.txt")).toBe("hello from the agent\n");
      expect(r.task.repo?.base).toBe(git(bare, "rev-parse", "main").trim());
      const rec = await recorded(serverOf(r.task.worker), r.sessionId, r.task.attempts.at(-1)!.directory);
      expect(rec.answer).toBe(r.answer);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("cancels a running task (interrupted, as opencode recorded) and a queued one (never started)", async () => {
    model.for("slow").queue(hang());
    const before = model.requests.filter((r) => r.model === "slow").length;
    const running = await queue.delegate({ task: "cancel me while running", model: "fake/slow", wait: false, requestId: "cancel-running" });
    // The model has the turn's request: the session exists and is on record (onSession comes first).
    await model.waitForRequests(before + 1, { model: "slow", timeoutMs: 60_000 });
    expect((await queue.read(running.task.id)).sessionId).toMatch(/^ses_/);
    const stopped = await queue.cancel(running.task.id);
    expect(stopped.wasRunning).toBe(true);
    expect(stopped.status).toBe("interrupted");
    const rec = await recorded(serverOf(stopped.task.worker), stopped.sessionId);
    expect(rec.error).toBe("MessageAbortedError");

    // A root whose only worker left: the task waits in its queue, and a cancel takes it off.
    const rootDir = await mkdtemp(join(tmpdir(), "occ-root-"));
    try {
      const lone = await startWorker({ id: "wRoot", queueUrl: redis.url, opencode: servers[0]!, roots: [rootDir] });
      await lone.stop();
      const queued = await queue.delegate({ task: "never runs", directory: rootDir, wait: false, requestId: "cancel-queued" });
      expect(queued.task.state).toBe("queued");
      expect(await queue.redis.lrange(`occ:${rootQueue(rootDir)}:wait`, 0, -1)).toEqual([queued.task.id]);
      const cancelled = await queue.cancel(queued.task.id);
      expect(cancelled.wasRunning).toBe(false);
      expect(cancelled.status).toBe("error");
      expect(cancelled.error?.name).toBe("Cancelled");
      expect((await queue.read(queued.task.id)).task.state).toBe("cancelled");
    } finally {
      await rm(rootDir, { recursive: true, force: true });
    }
  });

  it("keeps at most N tasks of a provider running across the fleet", async () => {
    await queue.redis.hset(queue.keys.limits, "fake", "1");
    try {
      model.for("steady").queue(times(4, text("one at a time", { delayMs: 700 })));
      const r = await queue.parallel(
        Array.from({ length: 4 }, (_, i) => ({ task: `limited ${i + 1}`, model: "fake/steady" })),
        { requestId: "limited" },
      );
      expect(r.results.map((x) => x.status)).toEqual(Array(4).fill("done"));
      const spans = await Promise.all([1, 2, 3, 4].map(async (i) => (await queue.read(`limited.${i}`)).task.attempts.at(-1)!));
      const sorted = spans.map((a) => [Date.parse(a.startedAt), Date.parse(a.endedAt!)] as const).sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < sorted.length; i++) expect(sorted[i]![0]).toBeGreaterThanOrEqual(sorted[i - 1]![1]);
    } finally {
      await queue.redis.hdel(queue.keys.limits, "fake");
    }
  });

  it("expires finished tasks after the retention TTL and is idempotent on request_id", async () => {
    const short = new TaskQueue({ url: redis.url, ttlS: 120 });
    try {
      const a = await short.delegate({ task: "ttl task", requestId: "ttl-task" });
      const again = await short.delegate({ task: "ttl task", requestId: "ttl-task" });
      expect(again.sessionId).toBe(a.sessionId);
      const job = await short.queue(a.task.queue).getJob("ttl-task");
      expect(job?.opts.removeOnComplete).toEqual({ age: 120 });
      const ttl = await short.redis.ttl(short.keys.attempts("ttl-task"));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(120);
    } finally {
      await short.close();
    }
  });

  it("lists and shows tasks at the terminal (queue ls|show), and a Conductor with a queue routes its verbs", async () => {
    const c = new Conductor({ url: servers[0]!.url, password: servers[0]!.password, queue: { url: redis.url } });
    try {
      const r = await c.delegate({ task: "library call through the queue" });
      const task = (r as QueuedSummary).task;
      expect(task.state).toBe("finished");
      expect((await c.wait(task.id)).sessionId).toBe(r.sessionId);
      expect((await c.result(task.id)).state).toBe("idle");
    } finally {
      c.close();
    }
    const cli = (...args: string[]) =>
      execFileSync(process.execPath, [join(import.meta.dirname, "../../dist/cli.js"), "queue", ...args, "--queue", redis.url], { encoding: "utf8" });
    const ls = cli("ls");
    expect(ls).toMatch(/workers:/);
    expect(ls).toContain("batch-24.1");
    expect(cli("show", "kill-me")).toMatch(/2 attempts: 1 lost on wA|2 attempts: 1 lost on wB/);
  });
});
