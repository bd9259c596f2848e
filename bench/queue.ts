// What the queue adds to a task, and what one worker costs, measured on this machine with the real
// parts: redis-server (AOF), worker processes of the built CLI, opencode with the scripted model.
//   1. latency (RUNS tasks one after another, median; target < 20 ms each):
//      enqueue → worker start: from just before the job is added to the attempt's start on the worker;
//      summary → caller: from the worker holding the turn summary to wait() returning it.
//   2. throughput: a batch of BATCH tasks of a TURN_MS model turn on WORKERS workers × CONCURRENCY.
//   3. memory: RSS of a worker process and of its opencode, idle and at CONCURRENCY sessions at once.
// Run: npm run bench:queue   (builds dist/ first when it is missing)
import { readOutcome } from "../src/core/queue/outcome-record.js";
import { existsSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { TaskQueue } from "../src/core/queue/client.js";
import { startOpencode, type TestOpencode } from "../test/support/opencode.js";
import { startScriptedModel, text, times } from "../test/support/scripted-model.js";
import { startWorker, type TestWorker } from "../test/fleet/support/fleet.js";
import { startRedis } from "../test/fleet/support/redis.js";
import { timingVerdict } from "./support/timing-verdict.js";

const RUNS = 30;
const BATCH = 48;
const TURN_MS = 1000;
const WORKERS = 2;
const CONCURRENCY = 4;
const TARGET_MS = 20;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
/** RSS of a process and its children (opencode runs a few helper processes). */
const treeRssMb = (pid: number): number => {
  const kids = execFileSync("sh", ["-c", `pgrep -P ${pid} || true`], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
    .map(Number);
  return rssMb(pid) + kids.reduce((sum, k) => sum + treeRssMb(k), 0);
};

/** CPU seconds (user + system) a process and its children used so far (clock ticks of 10 ms). */
const cpuS = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  const own = (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
  const kids = execFileSync("sh", ["-c", `pgrep -P ${pid} || true`], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
    .map(Number);
  return own + kids.reduce((sum, k) => sum + cpuS(k), 0);
};

if (!existsSync("dist/cli.js")) execFileSync("npm", ["run", "build", "--silent"], { stdio: "inherit" });

const redis = await startRedis();
const model = await startScriptedModel();
const servers: TestOpencode[] = [];
const workers: TestWorker[] = [];
const queue = new TaskQueue({ url: redis.url });
const missed: string[] = [];
try {
  for (let i = 0; i < WORKERS; i++) servers.push(await startOpencode({ model }));
  for (let i = 0; i < WORKERS; i++)
    workers.push(await startWorker({ id: `bench${i + 1}`, queueUrl: redis.url, opencode: servers[i]!, concurrency: CONCURRENCY }));
  const idleWorker = rssMb(workers[0]!.pid);
  const idleOpencode = treeRssMb(servers[0]!.pid);

  // 1. Latency, one task at a time (a warm-up first: the first turn of an opencode is slower).
  for (let i = 0; i < 3; i++) await queue.delegate({ task: `warm ${i}` });
  const toStart: number[] = [];
  const toCaller: number[] = [];
  const split = { client: [] as number[], pickup: [] as number[], worker: [] as number[] };
  for (let i = 0; i < RUNS; i++) {
    const enqueuedAt = Date.now();
    const r = await queue.delegate({ task: `latency ${i}` });
    const receivedAt = Date.now();
    const job = await queue.queue(r.task.queue).getJob(r.task.id);
    // The worker records each attempt's outcome in Redis as it ends (outcome-record.ts); the job's
    // own return value may be empty when that record completed it.
    const outcome = job!.returnvalue ?? (await readOutcome(queue.redis, queue.keys, r.task.id))!;
    const startedAt = Date.parse(outcome.attempts.at(-1)!.startedAt);
    toStart.push(startedAt - enqueuedAt);
    split.client.push(job!.timestamp - enqueuedAt);
    split.pickup.push((job!.processedOn ?? 0) - job!.timestamp);
    split.worker.push(startedAt - (job!.processedOn ?? 0));
    toCaller.push(receivedAt - outcome.summaryAt);
  }

  // 2 + 3. Throughput of a batch, sampling RSS while it runs.
  model.queue(times(BATCH, text("bench answer", { delayMs: TURN_MS })));
  let peakWorker = 0;
  let peakOpencode = 0;
  const sampler = setInterval(() => {
    peakWorker = Math.max(peakWorker, rssMb(workers[0]!.pid));
    peakOpencode = Math.max(peakOpencode, treeRssMb(servers[0]!.pid));
  }, 200);
  const cpuBefore = { worker: cpuS(workers[0]!.pid), opencode: cpuS(servers[0]!.pid) };
  const started = Date.now();
  const batch = await queue.parallel(
    Array.from({ length: BATCH }, (_, i) => ({ task: `throughput ${i}` })),
    { requestId: `bench-${Date.now()}` },
  );
  const wall = Date.now() - started;
  clearInterval(sampler);
  const cpu = { worker: cpuS(workers[0]!.pid) - cpuBefore.worker, opencode: cpuS(servers[0]!.pid) - cpuBefore.opencode };
  const done = batch.results.filter((r) => r.status === "done").length;
  const perMin = (done / wall) * 60_000;
  const perSession = (peakOpencode - idleOpencode) / CONCURRENCY;

  const line = (label: string, xs: number[]) =>
    `${label}: median ${median(xs).toFixed(1)} ms, p90 ${p90(xs).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (${xs.length} tasks)`;
  console.log(line("enqueue → worker start", toStart));
  console.log(
    `  split (medians): caller until add ${median(split.client).toFixed(1)} ms, add → BullMQ hands it to the worker ${median(split.pickup).toFixed(1)} ms, worker until the attempt starts ${median(split.worker).toFixed(1)} ms`,
  );
  console.log(line("summary → caller     ", toCaller));
  console.log(
    `throughput: ${done}/${BATCH} done in ${(wall / 1000).toFixed(1)} s on ${WORKERS} workers × ${CONCURRENCY} = ${perMin.toFixed(0)} tasks/min (model turn ${TURN_MS} ms; ideal ${((WORKERS * CONCURRENCY * 60_000) / TURN_MS).toFixed(0)})`,
  );
  console.log(`worker RSS: ${idleWorker.toFixed(0)} MB idle, ${peakWorker.toFixed(0)} MB peak at ${CONCURRENCY} tasks`);
  console.log(
    `opencode RSS (with helpers): ${idleOpencode.toFixed(0)} MB idle, ${peakOpencode.toFixed(0)} MB peak at ${CONCURRENCY} sessions ≈ ${perSession.toFixed(0)} MB per concurrent session`,
  );
  console.log(
    `CPU during the batch (one worker of ${WORKERS}): worker ${((cpu.worker / wall) * 1000).toFixed(2)} cores, its opencode ${((cpu.opencode / wall) * 1000).toFixed(2)} cores (${(BATCH / WORKERS).toFixed(0)} tasks; ${(((cpu.worker + cpu.opencode) / (BATCH / WORKERS)) * 1000).toFixed(0)} ms CPU per task)`,
  );
  const keysNow = await queue.redis.keys("occ:tasks:*");
  console.log(
    `BullMQ keys of the shared queue (what KEDA reads): ${keysNow.filter((k) => /:(wait|active)$/.test(k)).join(", ") || "(wait/active lists are empty now)"}; all: ${[...new Set(keysNow.map((k) => k.split(":").slice(0, 3).join(":")))].slice(0, 12).join(", ")}`,
  );
  for (const [label, xs] of [
    ["enqueue → worker start", toStart],
    ["summary → caller", toCaller],
  ] as const) {
    if (median(xs) >= TARGET_MS) {
      missed.push(label);
      console.log(`OVER TARGET: ${label} median ${median(xs).toFixed(1)} ms ≥ ${TARGET_MS} ms`);
    }
  }
} finally {
  await queue.close();
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(servers.map((s) => s.stop()));
  await model.close();
  await redis.stop();
}
timingVerdict(missed);
process.exit(process.exitCode ?? 0);
