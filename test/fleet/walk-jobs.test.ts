// A detached workflow run (docs/workflows.md, "the walk is a job"): a real redis-server, two
// opencode servers with the scripted model, two worker processes (one task at a time each, both
// serving the project's directory as a root, as two machines on one shared volume) that also take
// walk jobs. An MCP server starts the run with `detach`: a worker takes its walk job, not the MCP
// server. That worker is SIGKILLed while the agent step runs; BullMQ's stalled-job check hands the
// walk to the other worker, which walks the run on from Redis (the step re-attached: its model asked
// once) to its sign-off, where the walk job ends and the run waits, BLOCKED. The CLI's answer (a
// process of its own) queues the walk again and the worker finishes the run. Every step's outcome is
// compared with the session as the opencode that ran it recorded it, re-read from that server. A
// second run is cancelled from another process while a worker walks it.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import { TaskQueue } from "../../src/core/queue/client.js";
import type { WorkflowRun } from "../../src/core/workflows/run-record.js";
import { CLI } from "../support/mcp-client.js";
import { makeProjectDir, startOpencode, type TestOpencode } from "../support/opencode.js";
import { scratchEnv } from "../support/scratch-home.js";
import { startScriptedModel, text, type ScriptedModel } from "../support/scripted-model.js";
import { startWorker, type TestWorker } from "./support/fleet.js";
import { startRedis, type TestRedis } from "./support/redis.js";
import { APPROVE, chatsOf, FleetMcps } from "./support/workflow-fleet.js";
import { recorded, recordedOutcome } from "./support/truth.js";

const MODELS = { provider: { fake: { models: { fixer: { name: "Fixer" }, reviewer: { name: "Reviewer" }, writer: { name: "Writer" } } } } };

const WORKFLOW = `name: a walk on the fleet
inputs:
  bug: { description: the bug }
steps:
  - name: implement
    kind: agent
    prompt: "Fix: {{inputs.bug}}"
    model: fake/fixer
  - name: tests
    kind: check
    run: "git rev-parse --git-dir"
  - name: review
    kind: review
    of: implement
    model: fake/reviewer
  - name: sign-off
    kind: approval
    message: "Ship the fix for {{inputs.bug}}?"
  - name: notes
    kind: agent
    prompt: "Write the release note for: {{inputs.bug}}"
    model: fake/writer
`;

let redis: TestRedis;
let model: ScriptedModel;
let servers: TestOpencode[] = [];
let workers: TestWorker[] = [];
let queue: TaskQueue;
let reader: Conductor;
let project: string;
const mcps = new FleetMcps(() => redis.url);
const mcp = (s: TestOpencode, name: string) => mcps.start(s, name);

/** `opencode-conductor run-workflow ARGS` as a user runs it against the fleet; resolves with its exit and stdout. */
function cli(s: TestOpencode, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, "run-workflow", ...args], {
    env: {
      ...scratchEnv(),
      OPENCODE_URL: s.url,
      OPENCODE_PASSWORD: s.password,
      OPENCODE_CONDUCTOR_QUEUE: redis.url,
      OPENCODE_CONDUCTOR_STATE_DIR: join(s.root, "state-cli"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stdout, stderr })));
}

const chats = (id: string) => chatsOf(model, id);
const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The worker that takes the run's walk job number `n`. */
async function walkerOf(id: string, n: number, among = workers): Promise<TestWorker> {
  const pattern = new RegExp(`walk ${escaped(id)} \\(job ${escaped(id)}\\.walk-${n}\\)`);
  return Promise.any(among.map((w) => w.waitFor(pattern, 180_000).then(() => w)));
}

beforeAll(async () => {
  redis = await startRedis();
  model = await startScriptedModel();
  servers = await Promise.all([startOpencode({ model, config: MODELS, gitInit: true }), startOpencode({ model, config: MODELS, gitInit: true })]);
  project = await makeProjectDir(servers[0]!, "walked-project", { gitInit: true });
  // Walk jobs on (the default, two at once), one task at a time: a walk never waits on a task slot.
  workers = await Promise.all([
    startWorker({ id: "walkA", queueUrl: redis.url, opencode: servers[0]!, concurrency: 1, roots: [project] }),
    startWorker({ id: "walkB", queueUrl: redis.url, opencode: servers[1]!, concurrency: 1, roots: [project] }),
  ]);
  queue = new TaskQueue({ url: redis.url });
  reader = new Conductor({ url: servers[1]!.url, password: servers[1]!.password, queue: { url: redis.url } });
}, 120_000);

afterAll(async () => {
  await mcps.closeAll();
  reader?.close();
  await queue?.close();
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(servers.map((s) => s.stop()));
  await model?.close();
  await redis?.stop();
}, 120_000);

/** Each agent and review turn against the session as the opencode that ran it recorded it (the fleet's index names the server). */
async function expectRecorded(run: WorkflowRun, prompts: Record<string, string>): Promise<number> {
  let turns = 0;
  for (const step of run.steps.filter((s) => s.kind === "agent" || s.kind === "review")) {
    for (const attempt of step.attempts) {
      for (const turn of attempt.turns ?? []) {
        const holder = servers.find((s) => s.url === turn.queued?.server);
        expect(holder, `${step.name}: ${turn.sessionId} is on a server of the fleet`).toBeDefined();
        const rec = await recorded(holder!, turn.sessionId!, project);
        expect(rec.completed, `${step.name}: ${turn.sessionId}`).toBe(true);
        expect(turn.answer).toBe(rec.answer);
        expect(turn.status).toBe((await recordedOutcome(holder!, turn.sessionId!, project)).status);
        if (prompts[step.name]) expect(rec.prompt).toBe(prompts[step.name]);
        turns++;
      }
    }
  }
  return turns;
}

describe("a detached workflow run: the walk is a job", () => {
  it("is walked by a worker; when that worker is SIGKILLed mid-step the other takes the walk over (the model asked once per step), stops at the sign-off, and an answer from the CLI queues the walk again to the end", async () => {
    model.for("fixer").queue(text("Fixed it.", { delayMs: 8_000 }));
    model.for("reviewer").queue(text(`The fix looks right.\n${APPROVE}`));
    model.for("writer").queue(text("Fixed the walk bug."));
    const before = { fixer: chats("fixer"), reviewer: chats("reviewer"), writer: chats("writer") };

    const starter = await mcp(servers[0]!, "starter");
    const started = await starter.call("oc_workflow", {
      action: "start",
      text: WORKFLOW,
      inputs: { bug: "the walk" },
      directory: project,
      detach: true,
      timeout_s: 0,
    });
    expect(started.isError, started.text).toBe(false);
    const id = (started.data.run as { id: string }).id;
    // Queued as walk job 1, which a worker takes: the starting server does not walk it.
    const first = await walkerOf(id, 1);
    await model.waitForRequests(before.fixer + 1, { model: "fixer", kind: "chat", timeoutMs: 180_000 });
    const walking = (await reader.workflows.get(id)) as WorkflowRun;
    expect(walking.detached).toEqual({ walks: 1 });
    expect(walking.owner.pid).toBe(first.pid);
    expect(walking.steps[0]!.status).toBe("running");
    await first.kill();

    // The other worker gets the same walk job from BullMQ's stalled-job check and walks on from Redis.
    const survivor = workers.find((w) => w !== first)!;
    await survivor.waitFor(new RegExp(`walk ${escaped(id)} \\(job ${escaped(id)}\\.walk-1\\)`), 180_000);
    const blocked = await reader.workflows.wait(id, { timeoutMs: 300_000 });
    expect(blocked.status).toBe("blocked");
    expect(blocked.owner.pid).toBe(survivor.pid);
    expect(blocked.steps.map((s) => [s.name, s.status, s.attempts.length])).toEqual([
      ["implement", "done", 1],
      ["tests", "done", 1],
      ["review", "done", 1],
      ["sign-off", "blocked", 1],
      ["notes", "pending", 0],
    ]);
    expect(blocked.steps[3]!.attempts[0]!.asked).toBe("Ship the fix for the walk?");
    // The walk job ends with the run waiting at its sign-off: nothing walks a run no person answered.
    await survivor.waitFor(new RegExp(`walked ${escaped(id)}: blocked`), 60_000);
    // The step re-attached, never prompted again: each model asked once.
    expect(chats("fixer") - before.fixer).toBe(1);
    expect(chats("reviewer") - before.reviewer).toBe(1);
    expect(await expectRecorded(blocked, { implement: "Fix: the walk" })).toBe(2);

    // The answer from another process (the CLI) queues walk job 2, which the surviving worker walks to the end.
    const answered = await cli(servers[0]!, ["--answer", id, "--approve", "--comment", "ship it", "--json"]);
    expect(answered.code, `${answered.stderr}\n${answered.stdout}`).toBe(0);
    const done = JSON.parse(answered.stdout) as WorkflowRun;
    expect(done.status).toBe("done");
    expect(done.detached).toEqual({ walks: 2 });
    await walkerOf(id, 2, [survivor]);
    expect(done.owner.pid).toBe(survivor.pid);
    expect(done.steps[3]!.attempts[0]!.signOff).toMatchObject({ decision: "approve", by: "human (cli)", comment: "ship it" });
    expect(done.steps[4]!.attempts[0]!.turns!.map((t) => [t.status, t.answer])).toEqual([["done", "Fixed the walk bug."]]);
    expect(chats("writer") - before.writer).toBe(1);
    expect(chats("fixer") - before.fixer).toBe(1);
    expect(await expectRecorded(done, { implement: "Fix: the walk", notes: "Write the release note for: the walk" })).toBe(3);
  }, 600_000);

  it("is cancelled from another process while a worker walks it: the step's turn is interrupted (as opencode recorded it) and the walker ends the run cancelled", async () => {
    model.for("fixer").queue(text("never gets here", { delayMs: 120_000 }));
    const before = chats("fixer");
    const starter = await mcp(servers[1]!, "starter-2");
    const started = await starter.call("oc_workflow", {
      action: "start",
      text: WORKFLOW,
      inputs: { bug: "c" },
      directory: project,
      detach: true,
      timeout_s: 0,
    });
    expect(started.isError, started.text).toBe(false);
    const id = (started.data.run as { id: string }).id;
    await model.waitForRequests(before + 1, { model: "fixer", kind: "chat", timeoutMs: 180_000 });

    const other = await mcp(servers[0]!, "canceller");
    const asked = await other.call("oc_workflow", { action: "cancel", run: id });
    expect(asked.isError, asked.text).toBe(false);
    const ended = await reader.workflows.wait(id, { timeoutMs: 120_000 });
    expect(ended.status).toBe("cancelled");
    expect(ended.end).toMatchObject({ status: "cancelled", reason: "cancelled on request" });
    const attempt = ended.steps[0]!.attempts[0]!;
    expect(attempt.status).toBe("cancelled");
    const turn = attempt.turns![0]!;
    const holder = servers.find((s) => s.url === turn.queued?.server)!;
    expect(turn.status).toBe((await recordedOutcome(holder, turn.sessionId!, project)).status);
    expect(turn.status).toBe("interrupted");
    expect(ended.steps.slice(1).map((s) => s.status)).toEqual(["pending", "pending", "pending", "pending"]);
    expect(chats("fixer") - before).toBe(1);
  }, 300_000);

  it("takes a walk job no worker has taken off the queue on cancel (the run ends cancelled); a resume while it waits queues no second walk; refused without a queue", async () => {
    // A fleet of its own (another key prefix) with no worker: the walk job stays where BullMQ put it.
    const settings = { url: redis.url, prefix: "nowalkers" };
    const lonely = new Conductor({ url: servers[1]!.url, password: servers[1]!.password, queue: settings });
    const jobs = new TaskQueue(settings);
    try {
      const run = await lonely.workflows.start({ text: WORKFLOW, inputs: { bug: "d" }, directory: project, detach: true });
      expect(run.detached).toEqual({ walks: 1 });
      expect(await jobs.queue("walks").getJobState(`${run.id}.walk-1`)).toBe("waiting");
      expect((await lonely.workflows.resume(run.id)).detached).toEqual({ walks: 1 });
      // A waiter is not kept waiting on a walk no worker takes: after walkPickupMs it has the run as
      // it stands, still queued.
      const waited = await lonely.workflows.wait(run.id, { walkPickupMs: 1_000 });
      expect(waited.status).toBe("running");
      expect(await jobs.queue("walks").getJobState(`${run.id}.walk-1`)).toBe("waiting");
      // oc_status and `queue ls` count it apart from the tasks.
      const status = await jobs.status();
      expect(status.walks).toMatchObject({ waiting: 1, active: 0 });
      expect(status.counts.waiting).toBe(0);
      const cancelled = await lonely.workflows.cancel(run.id);
      expect(cancelled.status).toBe("cancelled");
      expect(cancelled.end).toMatchObject({ status: "cancelled", reason: "cancelled on request" });
      expect(await jobs.queue("walks").getJobState(`${run.id}.walk-1`)).toBe("unknown");
      expect(cancelled.steps.map((s) => s.attempts.length)).toEqual([0, 0, 0, 0, 0]);
    } finally {
      lonely.close();
      await jobs.close();
    }
    const local = new Conductor({ url: servers[1]!.url, password: servers[1]!.password, queue: false });
    try {
      await expect(local.workflows.start({ text: WORKFLOW, inputs: { bug: "e" }, directory: project, detach: true })).rejects.toThrow(
        "`detach` walks the run on the fleet's queue",
      );
    } finally {
      local.close();
    }
  }, 120_000);

  it("walks a run in a pod of its own (worker --concurrency 0 --walks 1 --max-jobs 1, as deploy/k8s/scaledjob/run-scaledjob.yaml): the pod takes no task, exits 0 when the walk stops at the sign-off, and the answer's walk is the next pod's", async () => {
    // A fleet of its own: a task worker that takes no walk (as task-scaledjob.yaml) and run pods.
    const prefix = "pods";
    const settings = { url: redis.url, prefix };
    const tasks = await startWorker({ id: "taskPod", queueUrl: redis.url, opencode: servers[0]!, concurrency: 1, walks: 0, roots: [project], prefix });
    workers.push(tasks);
    const pod = (id: string) => startWorker({ id, queueUrl: redis.url, opencode: servers[1]!, concurrency: 0, walks: 1, maxJobs: 1, prefix });
    const lib = new Conductor({ url: servers[1]!.url, password: servers[1]!.password, queue: settings });
    model.for("fixer").queue(text("Fixed in a pod."));
    model.for("reviewer").queue(text(`Fine.\n${APPROVE}`));
    model.for("writer").queue(text("Noted in a pod."));
    const before = { fixer: chats("fixer"), reviewer: chats("reviewer"), writer: chats("writer") };
    try {
      const first = await pod("runPod1");
      workers.push(first);
      const run = await lib.workflows.start({ text: WORKFLOW, inputs: { bug: "pods" }, directory: project, detach: true });
      // The walk stops at the sign-off: the pod's one job has ended, and it exits by itself.
      expect(await first.exited).toBe(0);
      expect(first.output()).toContain(`walked ${run.id}: blocked`);
      expect(first.output()).toContain("1 job ended (--max-jobs): stopping");
      const blocked = await lib.workflows.get(run.id);
      expect(blocked.status).toBe("blocked");
      expect(blocked.owner.pid).toBe(first.pid);
      // The pod walked, the task worker ran the steps (a pod per run takes no task).
      for (const i of [0, 2]) expect(blocked.steps[i]!.attempts[0]!.turns!.map((t) => t.queued?.worker)).toEqual(["taskPod"]);
      expect(await expectRecorded(blocked, { implement: "Fix: pods" })).toBe(2);

      await lib.workflows.answer(run.id, { approve: true, by: "test" });
      const second = await pod("runPod2");
      workers.push(second);
      expect(await second.exited).toBe(0);
      const done = await lib.workflows.get(run.id);
      expect(done.status).toBe("done");
      expect(done.owner.pid).toBe(second.pid);
      expect(done.detached).toEqual({ walks: 2 });
      expect(done.steps[4]!.attempts[0]!.turns!.map((t) => [t.queued?.worker, t.status, t.answer])).toEqual([["taskPod", "done", "Noted in a pod."]]);
      expect({ fixer: chats("fixer") - before.fixer, reviewer: chats("reviewer") - before.reviewer, writer: chats("writer") - before.writer }).toEqual({
        fixer: 1,
        reviewer: 1,
        writer: 1,
      });
      expect(await expectRecorded(done, { implement: "Fix: pods", notes: "Write the release note for: pods" })).toBe(3);
    } finally {
      lib.close();
    }
  }, 300_000);
});
