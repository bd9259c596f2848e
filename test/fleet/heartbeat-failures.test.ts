// A worker whose heartbeat cannot reach Redis says so in its log once, naming why, not on every
// beat, and says when it works again; it does not crash meanwhile. Against a real redis-server that
// is shut down and started again (no mocks); the worker runs in this process with a fast beat
// (walks and tasks off: no opencode is needed for its heartbeat). The queue URL carries a password,
// which no log line may show.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import { readWorkers } from "../../src/core/queue/adverts.js";
import { TaskQueue } from "../../src/core/queue/client.js";
import { keys } from "../../src/core/queue/names.js";
import { FleetWorker } from "../../src/core/queue/worker.js";
import { RedisRunStore } from "../../src/core/workflows/redis-run-store.js";
import { beating } from "../../src/core/workflows/walker.js";
import { startRedis, type TestRedis } from "./support/redis.js";

const PASSWORD = "hb-secret-pw";
const PREFIX = "hbtest";

let redis: TestRedis;
let queue: TaskQueue;

beforeAll(async () => {
  redis = await startRedis();
  queue = new TaskQueue({ url: redis.url, prefix: PREFIX });
}, 60_000);

afterAll(async () => {
  await queue?.close();
  await redis?.stop();
}, 60_000);

/** Resolves once `ok()` holds, checked every 25 ms; fails after `ceilingMs` (a ceiling, not an expectation). */
async function until(ok: () => boolean | Promise<boolean>, ceilingMs: number, what: string): Promise<void> {
  const deadline = Date.now() + ceilingMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`not within ${ceilingMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("worker heartbeat against a Redis that goes away", () => {
  it("logs the failure once with its cause, keeps running, and logs the recovery once", async () => {
    const lines: string[] = [];
    // Redis asks for no password: ioredis warns and goes on, so the URL's password is only a secret to keep out of the log.
    const url = redis.url.replace("redis://", `redis://:${PASSWORD}@`);
    const worker = new FleetWorker({
      queue: { url, prefix: PREFIX },
      conductor: new Conductor({ url: "http://127.0.0.1:1", queue: false }), // never called: no tasks, no walks
      workspace: redis.dir,
      concurrency: 0,
      walks: 0,
      heartbeatMs: 200,
      id: "hb-worker",
      log: (line) => lines.push(line),
    });
    const failed = () => lines.filter((l) => l.includes("heartbeat") && l.includes(" failed: "));
    const recovered = () => lines.filter((l) => l.includes("heartbeat") && / works again \(/.test(l));
    try {
      await worker.start();
      expect((await readWorkers(queue.redis, keys(PREFIX))).map((w) => w.id)).toEqual(["hb-worker"]);

      await redis.down();
      await until(() => failed().length > 0, 20_000, "the heartbeat's failure in the log");
      // Many beats fail in the streak, but the log says it once.
      await until(() => (worker.heartbeatFailure?.failures ?? 0) >= 5, 20_000, "five failed beats");
      expect(failed()).toHaveLength(1);
      expect(failed()[0]).toContain("[worker hb-worker] heartbeat");
      expect(failed()[0]).toContain("no answer from Redis within 200 ms");
      expect(failed()[0]).toContain(`ECONNREFUSED 127.0.0.1:${redis.port}`);
      expect(worker.heartbeatFailure?.error).toContain("ECONNREFUSED");
      expect(recovered()).toHaveLength(0);

      await redis.up();
      const upAt = Date.now();
      await until(() => recovered().length > 0, 20_000, "the heartbeat's recovery in the log");
      expect(worker.heartbeatFailure).toBeUndefined();
      // Redis holds this worker's advert again, renewed after the outage (beats held during it land first).
      await until(
        async () => (await readWorkers(queue.redis, keys(PREFIX))).some((w) => w.id === "hb-worker" && Date.parse(w.heartbeat) >= upAt),
        20_000,
        "an advert renewed after Redis came back",
      );
      expect(recovered()).toHaveLength(1);
      expect(recovered()[0]).toMatch(/\[worker hb-worker\] heartbeat .* works again \(\d+ failed writes? over [\d.]+ m?s\)/);
      expect(failed()).toHaveLength(1);
      for (const line of lines) expect(line).not.toContain(PASSWORD);
    } finally {
      await worker.close(true);
    }
  }, 90_000);

  it("does not hang the worker's close while Redis is away: removing its advert is bounded and its failure logged", async () => {
    const lines: string[] = [];
    const worker = new FleetWorker({
      queue: { url: redis.url, prefix: PREFIX },
      conductor: new Conductor({ url: "http://127.0.0.1:1", queue: false }),
      workspace: redis.dir,
      concurrency: 0,
      walks: 0,
      heartbeatMs: 200,
      id: "hb-closing",
      log: (line) => lines.push(line),
    });
    await worker.start();
    await redis.down();
    try {
      await worker.close(true);
      expect(lines.filter((l) => l.includes("removing the advert failed: no answer from Redis within 200 ms"))).toHaveLength(1);
    } finally {
      await redis.up();
    }
  }, 60_000);
});

describe("workflow walker heartbeat against a Redis that goes away", () => {
  it("logs the failing beat once and its recovery once, and the walk goes on", async () => {
    await queue.reachable();
    const store = new RedisRunStore(queue);
    const lines: string[] = [];
    let finish!: (v: string) => void;
    const work = new Promise<string>((r) => (finish = r));
    // No such run in Redis: each beat reads it and writes nothing, which is a beat that worked.
    const walked = beating(store, "wfr_heartbeat_test", () => work, { log: (line) => lines.push(line), everyMs: 100 });
    const failed = () => lines.filter((l) => l.startsWith("heartbeat of run wfr_heartbeat_test (in the fleet's Redis) failed: "));
    const recovered = () => lines.filter((l) => / works again \(\d+ failed writes? over /.test(l));
    await redis.down();
    await until(() => failed().length > 0, 20_000, "the walker's failing heartbeat in the log");
    expect(failed()[0]).toContain("no answer from the fleet's Redis within 100 ms");
    await redis.up();
    await until(() => recovered().length > 0, 20_000, "the walker's heartbeat recovery in the log");
    finish("walked");
    expect(await walked).toBe("walked");
    expect(failed()).toHaveLength(1);
    expect(recovered()).toHaveLength(1);
  }, 60_000);
});
