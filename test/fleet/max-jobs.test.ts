// `worker --max-jobs 1`, what each pod of the KEDA ScaledJob (deploy/k8s/scaledjob/) runs: a worker
// process of the built CLI takes one task, exits 0 once it has ended and leaves the next task
// queued for the next pod. Against a real redis-server and opencode 1.x with the scripted model;
// each result is compared with the session opencode recorded, and the model is asked once per task.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TaskQueue } from "../../src/core/queue/client.js";
import { startOpencode, type TestOpencode } from "../support/opencode.js";
import { startScriptedModel, text, times, type ScriptedModel } from "../support/scripted-model.js";
import { startWorker, type TestWorker } from "./support/fleet.js";
import { startRedis, type TestRedis } from "./support/redis.js";
import { recorded } from "./support/truth.js";

let redis: TestRedis;
let model: ScriptedModel;
let server: TestOpencode;
let queue: TaskQueue;
const workers: TestWorker[] = [];

beforeAll(async () => {
  redis = await startRedis();
  model = await startScriptedModel();
  server = await startOpencode({ model, config: { provider: { fake: { models: { pod: { name: "Pod" } } } } }, gitInit: true });
  queue = new TaskQueue({ url: redis.url });
}, 120_000);

afterAll(async () => {
  await queue?.close();
  await Promise.all(workers.map((w) => w.stop()));
  await server?.stop();
  await model?.close();
  await redis?.stop();
}, 120_000);

describe("worker --max-jobs 1 (a pod per task)", () => {
  it("takes one task, exits 0 once it has ended, and leaves the next one queued for the next worker", async () => {
    model.for("pod").queue(times(2, text("done in a pod of its own", { delayMs: 1_000 })));
    const before = model.requests.filter((r) => r.kind === "chat" && r.model === "pod").length;
    const ids = ["pod-1", "pod-2"];
    for (const id of ids) await queue.delegate({ task: `task ${id}`, model: "fake/pod", wait: false, requestId: id });

    const first = await startWorker({ id: "pod1", queueUrl: redis.url, opencode: server, concurrency: 1, maxJobs: 1 });
    workers.push(first);
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain("1 job ended (--max-jobs): stopping");
    const afterFirst = await Promise.all(ids.map((id) => queue.read(id)));
    expect(afterFirst.map((r) => r.task.state).sort()).toEqual(["finished", "queued"]);
    expect(afterFirst.find((r) => r.task.state === "finished")!.task.worker).toBe("pod1");

    const second = await startWorker({ id: "pod2", queueUrl: redis.url, opencode: server, concurrency: 1, maxJobs: 1 });
    workers.push(second);
    expect(await second.exited).toBe(0);
    const results = await Promise.all(ids.map((id) => queue.read(id)));
    expect(results.map((r) => r.task.worker).sort()).toEqual(["pod1", "pod2"]);
    for (const [i, r] of results.entries()) {
      expect(r.status).toBe("done");
      expect(r.task.attempts).toHaveLength(1);
      const rec = await recorded(server, r.sessionId);
      expect(rec).toMatchObject({ prompt: `task ${ids[i]}`, completed: true, answer: r.answer });
    }
    expect(model.requests.filter((r) => r.kind === "chat" && r.model === "pod").length - before).toBe(2);
  }, 300_000);
});
