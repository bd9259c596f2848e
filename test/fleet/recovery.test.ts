// What the fleet keeps when its parts fail, against real parts: redis-server (AOF on), two opencode
// servers with the scripted model, worker processes with their own workspaces. Each test counts
// the model's requests per task (the scripted model records every one), so "asked once" is what
// the model saw, and each outcome is compared with the session as its opencode recorded it.
import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TaskQueue } from "../../src/core/queue/client.js";
import type { QueuedSummary } from "../../src/core/queue/outcome.js";
import { startOpencode, type TestOpencode } from "../support/opencode.js";
import { hang, startScriptedModel, text, times, type ScriptedModel } from "../support/scripted-model.js";
import { startWorker, type TestWorker } from "./support/fleet.js";
import { startRedis, type TestRedis } from "./support/redis.js";
import { chatRequestsWith, recorded } from "./support/truth.js";

const MODELS = { provider: { fake: { models: { steady: { name: "Steady" }, slow: { name: "Slow" } } } } };

let redis: TestRedis;
let model: ScriptedModel;
const servers: TestOpencode[] = [];
let workers: TestWorker[] = [];
let queue: TaskQueue;

const asks = (prompt: string) => chatRequestsWith(model, prompt);

/** The result equals what the opencode that holds its session recorded (the attempt's server). */
async function expectRecorded(r: QueuedSummary, prompt: string) {
  expect(r.status, JSON.stringify(r.error)).toBe("done");
  const url = r.task.attempts.find((a) => a.sessionId === r.sessionId)?.server;
  const holder = servers.find((s) => s.url === url);
  expect(holder, `no test server at ${url}`).toBeDefined();
  const rec = await recorded(holder!, r.sessionId);
  expect(rec.prompt).toBe(prompt);
  expect(rec.completed).toBe(true);
  expect(r.answer).toBe(rec.answer);
}

async function stopWorkers() {
  await Promise.all(workers.map((w) => w.stop()));
  workers = [];
}

beforeAll(async () => {
  redis = await startRedis();
  model = await startScriptedModel();
  // One after the other, each kept as it starts: a start that fails leaves the other to afterAll's stop.
  for (let i = 0; i < 2; i++) servers.push(await startOpencode({ model, config: MODELS }));
  queue = new TaskQueue({ url: redis.url });
}, 120_000);

afterEach(async (ctx) => {
  // A failure says what each worker did.
  if (ctx.task.result?.state === "fail") process.stderr.write(`${workers.map((w) => `--- ${w.id}\n${w.output()}`).join("\n")}\n`);
  await stopWorkers();
}, 120_000);

afterAll(async () => {
  await queue?.close();
  await Promise.all(servers.map((s) => s.stop()));
  await model?.close();
  await redis?.stop();
}, 120_000);

describe("the fleet keeps finished work and re-attaches instead of re-prompting", () => {
  it("a 45 s Redis outage under a 24-task batch with the default lock: 24 results, each task's model asked once", async () => {
    workers = await Promise.all([
      startWorker({ id: "oA", queueUrl: redis.url, opencode: servers[0]!, lockS: null }),
      startWorker({ id: "oB", queueUrl: redis.url, opencode: servers[1]!, lockS: null }),
    ]);
    const prompts = Array.from({ length: 24 }, (_, i) => `outage task <${i + 1}>`);
    model.for("steady").queue(times(24, text("answered through the outage", { delayMs: 8_000 })));
    const before = model.requests.filter((r) => r.model === "steady").length;
    const batch = queue.parallel(
      prompts.map((task) => ({ task, model: "fake/steady" })),
      { requestId: "outage-24" },
    );
    // Both workers run their first tasks (8 at once), then Redis goes away for 45 s, longer than the 30 s lock.
    await model.waitForRequests(before + 8, { model: "steady", timeoutMs: 120_000 });
    const downAt = Date.now();
    await redis.down();
    await new Promise((r) => setTimeout(r, 45_000));
    await redis.up();
    const outage = Date.now() - downAt;
    const r = await batch;
    expect(outage).toBeGreaterThanOrEqual(45_000);
    expect(r.results.map((x) => x.status)).toEqual(Array(24).fill("done"));
    for (const [i, prompt] of prompts.entries()) {
      expect(asks(prompt), prompt).toBe(1);
      await expectRecorded(await queue.read(`outage-24.${i + 1}`), prompt);
    }
    // The workers said what they did with the tasks whose completion BullMQ refused.
    const log = workers.map((w) => w.output()).join("\n");
    const fromRecord = (log.match(/complete \S+ from its recorded outcome|re-attach \S+: worker \S+ still runs/g) ?? []).length;
    process.stderr.write(`outage: ${outage} ms; tasks completed from their record or their holder: ${fromRecord}\n`);
  }, 420_000);

  it("a worker SIGKILLed mid-batch while its opencode keeps running: its tasks are re-attached, each model asked once", async () => {
    workers = [
      await startWorker({ id: "kA", queueUrl: redis.url, opencode: servers[0]!, concurrency: 3 }),
      await startWorker({ id: "kB", queueUrl: redis.url, opencode: servers[1]!, concurrency: 3 }),
    ];
    const prompts = Array.from({ length: 6 }, (_, i) => `kill mid-batch <${i + 1}>`);
    model.for("steady").queue(times(6, text("finished on its own opencode", { delayMs: 6_000 })));
    const before = model.requests.filter((r) => r.model === "steady").length;
    const batch = queue.parallel(
      prompts.map((task) => ({ task, model: "fake/steady" })),
      { requestId: "kill-mid-batch" },
    );
    await model.waitForRequests(before + 6, { model: "steady", timeoutMs: 120_000 });
    const victim = workers[0]!;
    await victim.kill();
    const r = await batch;
    expect(r.results.map((x) => x.status)).toEqual(Array(6).fill("done"));
    let reattached = 0;
    for (const [i, prompt] of prompts.entries()) {
      expect(asks(prompt), prompt).toBe(1);
      const full = await queue.read(`kill-mid-batch.${i + 1}`);
      await expectRecorded(full, prompt);
      const [first, second] = full.task.attempts;
      if (first!.worker !== victim.id) continue;
      reattached++;
      expect(full.task.attempts.map((a) => [a.worker, a.outcome])).toEqual([
        [victim.id, "unreachable"],
        ["kB", "finished"],
      ]);
      expect(second!.reattach).toEqual({ of: 1 });
      expect(second!.sessionId).toBe(first!.sessionId);
      expect(second!.server).toBe(servers[0]!.url);
      expect(second!.rerun).toBeUndefined();
    }
    expect(reattached).toBe(3);
  }, 300_000);

  it("a worker SIGKILLed with its opencode: the task runs again, and its attempt says why", async () => {
    const doomed = await startOpencode({ model, config: MODELS });
    servers.push(doomed);
    workers = [await startWorker({ id: "dA", queueUrl: redis.url, opencode: doomed, concurrency: 1 })];
    const prompt = "both killed <1>";
    model.for("slow").queue(hang(), text("ran again on another worker"));
    const before = model.requests.filter((r) => r.model === "slow").length;
    const started = await queue.delegate({ task: prompt, model: "fake/slow", wait: false, requestId: "both-killed" });
    await model.waitForRequests(before + 1, { model: "slow", timeoutMs: 60_000 });
    // The survivor comes up only now, so the first attempt was surely on the doomed pair.
    workers.push(await startWorker({ id: "dB", queueUrl: redis.url, opencode: servers[1]!, reattachS: 5 }));
    await workers[0]!.kill();
    await doomed.kill();
    const r = await queue.wait(started.task.id, { timeoutMs: 180_000 });
    expect(r.status, JSON.stringify(r.error)).toBe("done");
    expect(r.answer).toBe("ran again on another worker");
    expect(r.task.attempts.map((a) => [a.worker, a.outcome])).toEqual([
      ["dA", "unreachable"],
      ["dB", "finished"],
    ]);
    const [first, second] = r.task.attempts;
    expect(second!.reattach).toBeUndefined();
    expect(second!.rerun).toMatch(
      new RegExp(`attempt 1's session ${first!.sessionId} could not be read: its opencode ${doomed.url} did not answer within 5 s`),
    );
    expect(second!.sessionId).not.toBe(first!.sessionId);
    expect(asks(prompt)).toBe(2);
    await expectRecorded(r, prompt);
    await doomed.stop();
    servers.pop();
  }, 300_000);

  it("counts every job waiting for a worker for KEDA (wait, prioritized, delayed), as the keys hold them, and walk jobs apart", async () => {
    // No worker runs now: jobs stay where BullMQ put them.
    const tasks = queue.queue("tasks");
    const jobs = [
      await tasks.add("task", { task: "backlog waiting" }, { jobId: "backlog-wait" }),
      await tasks.add("task", { task: "backlog prioritized" }, { jobId: "backlog-prio", priority: 5 }),
      await tasks.add("task", { task: "backlog delayed" }, { jobId: "backlog-delayed", delay: 600_000 }),
      // A detached workflow run's walk job (its own queue): what run-scaledjob.yaml scales on, never the task workers.
      await queue.queue("walks").add("walk", { runId: "wfr_backlog" } as never, { jobId: "wfr_backlog.walk-1" }),
    ];
    try {
      expect(await queue.redis.llen("occ:tasks:wait")).toBe(1);
      expect(await queue.redis.zcard("occ:tasks:prioritized")).toBe(1);
      expect(await queue.redis.zcard("occ:tasks:delayed")).toBe(1);
      const cli = join(import.meta.dirname, "../../dist/cli.js");
      const once = JSON.parse(execFileSync(process.execPath, [cli, "queue", "metrics", "--queue", redis.url], { encoding: "utf8" })) as {
        waiting: number;
        queues: Record<string, number>;
        walks: { waiting: number; active: number };
      };
      expect(once.waiting).toBe(3);
      expect(once.queues.tasks).toBe(3);
      expect(once.walks).toEqual({ waiting: 1, active: 0 });
      // Served for KEDA's metrics-api trigger.
      const server = spawn(process.execPath, [cli, "queue", "metrics", "--queue", redis.url, "--listen", "127.0.0.1:0"], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let err = "";
          server.stderr.on("data", (c: Buffer) => {
            err += c.toString();
            const m = /serving (http:\/\/\S+)/.exec(err);
            if (m) resolve(m[1]!);
          });
          server.once("exit", (code) => reject(new Error(`queue metrics exited (${code}): ${err}`)));
        });
        const served = (await (await fetch(url)).json()) as { waiting: number; walks: { waiting: number } };
        expect(served.waiting).toBe(3);
        expect(served.walks.waiting).toBe(1);
      } finally {
        server.kill("SIGTERM");
      }
    } finally {
      for (const j of jobs) await j.remove();
    }
  });
});
