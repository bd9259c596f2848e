// The fleet against real parts: redis-server (AOF on) on a free loopback port, two opencode
// servers with the scripted model, two worker processes with their own workspaces (two machines),
// and the built MCP server with OPENCODE_CONDUCTOR_QUEUE. Every outcome is compared with the
// session as the worker's opencode recorded it.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ElicitRequest } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../src/client/connect.js";
import { Conductor } from "../../src/core/conductor.js";
import { TaskQueue } from "../../src/core/queue/client.js";
import { rootQueue } from "../../src/core/queue/names.js";
import type { QueuedSummary } from "../../src/core/queue/outcome.js";
import { startMcp, type McpSession } from "../support/mcp-client.js";
import { startOpencode, type TestOpencode } from "../support/opencode.js";
import { hang, startScriptedModel, text, times, toolCall, type ScriptedModel } from "../support/scripted-model.js";
import { startWorker, type TestWorker } from "./support/fleet.js";
import { startRedis, type TestRedis } from "./support/redis.js";
import { chatRequestsWith, recorded, recordedOutcome } from "./support/truth.js";

const SLOW = { provider: { fake: { models: { slow: { name: "Slow" }, steady: { name: "Steady" }, spend: { name: "Spend" } } } } };

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

/** The test server a queued task's last attempt ran on (its worker may have been replaced since). */
const holderOf = (r: QueuedSummary) => {
  const s = servers.find((x) => x.url === r.task.attempts.at(-1)?.server);
  if (!s) throw new Error(`no test server ran ${r.task.id}`);
  return s;
};

/** An MCP server as a user of the fleet runs it: its own opencode, and the fleet's queue. */
const fleetMcpEnv = (s: TestOpencode) => ({ OPENCODE_URL: s.url, OPENCODE_PASSWORD: s.password, OPENCODE_CONDUCTOR_QUEUE: redis.url });

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
    const mcp = await startMcp(fleetMcpEnv(servers[0]!));
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
      expect(status.data.queue, status.text).toBeDefined();
      const q = status.data.queue as { counts: { completed: number }; workers: Array<{ id: string; host: string; concurrency: number; heartbeat: string }> };
      expect(q.counts.completed).toBeGreaterThanOrEqual(24);
      expect(q.workers.map((w) => w.id).sort()).toEqual(["wA", "wB"]);
      expect(q.workers[0]!.concurrency).toBe(4);
    } finally {
      await mcp.close();
    }
  });

  it("re-attaches to the session of a SIGKILLed worker whose opencode keeps running: 2 attempts, the model asked once", async () => {
    model.for("slow").queue(text("finished after its worker died", { delayMs: 8_000 }));
    const before = model.requests.filter((r) => r.model === "slow").length;
    const started = await queue.delegate({ task: "survive a dead worker", model: "fake/slow", wait: false, requestId: "kill-me" });
    const first = await model.waitForRequests(before + 1, { model: "slow", timeoutMs: 60_000 });
    const running = await queue.read(started.task.id);
    // What the KEDA ScaledObject reads (deploy/k8s): BullMQ's active list of the shared queue.
    expect(await queue.redis.type("occ:tasks:active")).toBe("list");
    expect(await queue.redis.lrange("occ:tasks:active", 0, -1)).toContain(started.task.id);
    const victim = workers.find((w) => w.id === running.task.attempts[0]!.worker)!;
    const survivor = workers.find((w) => w !== victim)!;
    await victim.kill();
    const r = await queue.wait(started.task.id, { timeoutMs: 120_000 });
    expect(r.task.attempts.map((a) => [a.worker, a.outcome])).toEqual([
      [victim.id, "unreachable"],
      [survivor.id, "finished"],
    ]);
    const [dead, follower] = r.task.attempts;
    expect(dead!.sessionId).toBe(first.at(-1)!.sessionId);
    expect(dead!.reason).toMatch(/lock on the job expired.*is followed by the next attempt/);
    expect(follower).toMatchObject({ reattach: { of: 1 }, sessionId: dead!.sessionId, server: victim.opencode.url });
    expect(r.sessionId).toBe(dead!.sessionId);
    expect(r.answer).toBe("finished after its worker died");
    // The model saw the task once: the follower read the session's end instead of prompting again.
    expect(model.requests.filter((x) => x.model === "slow" && x.kind === "chat").length - before).toBe(1);
    const rec = await recorded(victim.opencode, r.sessionId);
    expect(rec).toMatchObject({ prompt: "survive a dead worker", completed: true, answer: r.answer });
    // A new worker takes the dead one's place (same opencode) for the tests that follow.
    await victim.stop();
    workers[workers.indexOf(victim)] = await startWorker({ id: `${victim.id}2`, queueUrl: redis.url, opencode: victim.opencode });
  });

  it("continues and forks a session a worker ran from a fresh MCP server on the other opencode (oc_send, oc_wait, oc_session fork)", async () => {
    const task = await queue.read("batch-24.1");
    // Its worker may have been replaced since (the test above): the attempt names the server.
    const holder = servers.find((s) => s.url === task.task.attempts.at(-1)!.server)!;
    const other = servers.find((s) => s !== holder)!;
    const sessionId = task.sessionId;
    const mcp = await startMcp(fleetMcpEnv(other));
    try {
      model.forSession(sessionId).queue(text("a follow-up on the worker's opencode"));
      const sent = await mcp.call("oc_send", { session_id: sessionId, message: "one more thing, on the fleet" });
      expect(sent.isError, sent.text).toBe(false);
      const waited = await mcp.call("oc_wait", { session_id: sessionId }, { timeoutMs: 120_000 });
      expect(waited.isError, waited.text).toBe(false);
      expect(waited.data.status).toBe("done");
      const c = new Conductor({ url: holder.url, password: holder.password, directory: holder.directory, queue: false });
      try {
        const messages = await c.client.call("session.messages", { path: { sessionID: sessionId } });
        const texts = (role: string) =>
          messages
            .filter((m) => m.info.role === role)
            .map((m) => m.parts.flatMap((p) => (p.type === "text" && !("synthetic" in p && p.synthetic) ? [p.text] : [])).join(""));
        expect(texts("user").at(-1)).toBe("one more thing, on the fleet");
        expect(texts("assistant").at(-1)!.trim()).toBe(waited.data.answer);
        const fork = await mcp.call("oc_session", { session_id: sessionId, action: "fork" });
        expect(fork.isError, fork.text).toBe(false);
        const forkId = [...fork.text.matchAll(/ses_[A-Za-z0-9]+/g)].map((m) => m[0]).find((id) => id !== sessionId)!;
        expect(forkId).toBeDefined();
        // The fork is on the worker's opencode, with the parent's conversation.
        const forked = await c.client.call("session.messages", { path: { sessionID: forkId } });
        expect(forked.filter((m) => m.info.role === "user").length).toBe(messages.filter((m) => m.info.role === "user").length);
        const elsewhere = new Conductor({ url: other.url, password: other.password, queue: false });
        try {
          await expect(elsewhere.client.call("session.get", { path: { sessionID: forkId } })).rejects.toThrow();
        } finally {
          elsewhere.close();
        }
      } finally {
        c.close();
      }
    } finally {
      await mcp.close();
    }
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
    const env = fleetMcpEnv(servers[1]!);
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
    // Every request of the turn hangs: opencode's chunkTimeout (2 s) may retry the first before the cancel comes.
    model.for("slow").queue(times(6, hang()));
    const before = model.requests.filter((r) => r.model === "slow").length;
    const running = await queue.delegate({ task: "cancel me while running", model: "fake/slow", wait: false, requestId: "cancel-running" });
    // The model has the turn's request: the session exists and is on record (onSession comes first).
    await model.waitForRequests(before + 1, { model: "slow", timeoutMs: 60_000 });
    expect((await queue.read(running.task.id)).sessionId).toMatch(/^ses_/);
    const stopped = await queue.cancel(running.task.id);
    expect(stopped.wasRunning).toBe(true);
    model.for("slow").clear();
    expect(stopped.status).toBe("interrupted");
    // opencode's record says so: MessageAbortedError when the abort cut the stream, or a reply
    // completed with neither error nor finish when it came during a retry wait.
    const truth = await recordedOutcome(serverOf(stopped.task.worker), stopped.sessionId);
    expect(truth.status).toBe("interrupted");
    if (truth.error) expect(stopped.error?.name).toBe(truth.error.name);

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

  it("keeps delegations in the fleet's Redis: a handle at once, another caller's repeat starts no second job, wait reads the queue's record", async () => {
    const a = new Conductor({ url: servers[0]!.url, password: servers[0]!.password, queue: { url: redis.url } });
    const b = new Conductor({ url: servers[1]!.url, password: servers[1]!.password, queue: { url: redis.url } });
    try {
      model.for("steady").queue(text("kept in the ledger", { delayMs: 1_000 }));
      const before = model.requests.filter((r) => r.model === "steady").length;
      const handle = await a.delegations.delegate({ task: "ledger on the fleet", model: "fake/steady", requestId: "ledger-fleet" });
      expect(handle).toMatchObject({ id: expect.stringMatching(/^dlg_/), placement: "queue", queueId: "ledger-fleet", status: "working" });
      expect(await queue.redis.exists(`occ:fleet:ledger:${handle.id}`)).toBe(1);
      const again = await b.delegate({ task: "ledger on the fleet", model: "fake/steady", requestId: "ledger-fleet" });
      expect(again).toMatchObject({ replayed: true, status: "done" });
      expect((await b.delegations.list()).find((d) => d.requestId === "ledger-fleet")?.id).toBe(handle.id);
      const done = await b.delegations.wait(handle.id, { timeoutMs: 120_000 });
      expect(done).toMatchObject({ status: "completed", turn: "done" });
      const result = done.result as QueuedSummary;
      expect(result.answer).toBe(again.answer);
      await expectTruthful(result, "ledger on the fleet");
      expect(model.requests.filter((r) => r.model === "steady").length - before).toBe(1);
    } finally {
      a.close();
      b.close();
    }
  });

  it("stops a batch at its shared max_tokens across both workers: the total is opencode's recorded figures, the rest never prompted", async () => {
    // 12 tasks, 8 at once (4 per worker). Two answer at once (1,020 tokens each: under the cap of
    // 2,500); a third spends 1,020 more in a tool call 4 s in: the cap is passed, every running
    // task of the batch stops wherever it runs, and those still queued never start.
    const usage = { prompt_tokens: 1000, completion_tokens: 20 };
    model
      .for("spend")
      .queue(
        text("spent early", { usage }),
        text("spent early", { usage }),
        toolCall("bash", { command: "echo over the cap", description: "spend" }, { usage, delayMs: 4_000 }),
        times(12, text("never answered", { delayMs: 120_000 })),
      );
    const prompt = (i: number) => `budget task #${i + 1}.`;
    const tasks = Array.from({ length: 12 }, (_, i) => ({ task: prompt(i), model: "fake/spend", permissions: "auto" }));
    const mcp = await startMcp(fleetMcpEnv(servers[0]!));
    try {
      const res = await mcp.call("oc_delegate_parallel", { tasks, request_id: "budget-batch", max_tokens: 2_500 }, { timeoutMs: 180_000 });
      expect(res.isError, res.text).toBe(false);
      const results = res.data.results as Array<{
        index: number;
        status: string;
        tokens?: { total: number };
        error?: { name: string };
        task: { worker?: string; session_id?: string; attempts: Array<{ server?: string }> };
      }>;
      let total = 0;
      const ran: string[] = [];
      for (const r of results) {
        if (r.status === "not_started") {
          expect(r.error?.name).toBe("BudgetExceeded");
          expect(r.task.session_id).toBeUndefined();
          // Never prompted: the model saw nothing of it.
          expect(chatRequestsWith(model, prompt(r.index)), prompt(r.index)).toBe(0);
          continue;
        }
        expect(r.task, res.text).toBeDefined();
        // It ran: its tokens are the ones its opencode recorded for its session.
        const holder = servers.find((s) => s.url === r.task.attempts.at(-1)?.server)!;
        const rec = await recorded(holder, r.task.session_id!);
        expect(rec.prompt).toBe(prompt(r.index));
        expect(r.tokens?.total, prompt(r.index)).toBe(rec.tokens);
        if (r.status === "done") expect(rec).toMatchObject({ completed: true, answer: "spent early" });
        else expect([r.status, rec.error]).toEqual(["budget_exceeded", "MessageAbortedError"]);
        total += rec.tokens;
        ran.push(r.task.worker!);
      }
      const counts = res.data.counts as Record<string, number>;
      expect(counts.done, res.text).toBe(2);
      expect(counts.not_started, res.text).toBeGreaterThanOrEqual(2);
      expect((counts.done ?? 0) + (counts.budget_exceeded ?? 0) + (counts.not_started ?? 0)).toBe(12);
      expect(new Set(ran)).toEqual(new Set(workers.map((w) => w.id)));
      // The batch's total, as the workers added it up in Redis, is the sum of opencode's figures.
      expect(res.data.budget).toMatchObject({ tokens: total, exceeded: true, max_tokens: 2_500 });
      expect(total).toBe(3 * 1_020);
    } finally {
      model.for("spend").clear(); // the steps the budget cut off
      await mcp.close();
    }
  });

  it("a fleet task's `ask` rule reaches the caller through MCP elicitation; the answer reaches the worker's opencode, audited as the human's", async () => {
    const forms: ElicitRequest["params"][] = [];
    const mcp = await startMcp({ ...fleetMcpEnv(servers[0]!), OPENCODE_CONDUCTOR_TOOLSETS: "delegate,approve,audit" }, { elicitation: {} });
    mcp.client.setRequestHandler("elicitation/create", async (request) => {
      forms.push(request.params);
      return { action: "accept", content: { decision: "once" } };
    });
    try {
      model.for("scripted").queue(toolCall("bash", { command: "echo approved-on-the-fleet", description: "say it" }), text("Done after a fleet approval."));
      const r = await mcp.call("oc_delegate", { task: "run the fleet command", rules: { bash: "ask" }, request_id: "fleet-ask" }, { timeoutMs: 180_000 });
      expect(r.isError, r.text).toBe(false);
      expect(r.data.status, r.text).toBe("done");
      expect(forms).toHaveLength(1);
      expect(forms[0]!.message).toContain("echo approved-on-the-fleet");
      // opencode's record: the command ran once it was allowed, in the worker's session.
      const full = await queue.read("fleet-ask");
      const rec = await recorded(holderOf(full), full.sessionId);
      expect(rec.tools).toEqual([expect.objectContaining({ tool: "bash", status: "completed", output: expect.stringContaining("approved-on-the-fleet") })]);
      expect(r.data.answer).toBe(rec.answer);
      // The audit names the person who answered the form, on the worker's session.
      const audit = await mcp.call("oc_audit", { session_id: full.sessionId });
      expect((audit.data.entries as Array<Record<string, unknown>>).filter((e) => e.by !== undefined)).toEqual([
        expect.objectContaining({
          tool: "oc_delegate",
          by: "human",
          decision: "once",
          outcome: "ok",
          client: expect.objectContaining({ name: "e2e-test-client" }),
          detail: expect.objectContaining({ permission: "bash", action: "accept" }),
        }),
      ]);
    } finally {
      await mcp.close();
    }
  });

  it("a fleet task's `ask` rule waits in oc_pending of a fresh MCP server on the other opencode; its oc_answer reaches the worker's opencode, audited as the model's", async () => {
    const caller = await startMcp(fleetMcpEnv(servers[0]!));
    let answerer: McpSession | undefined;
    try {
      model.for("scripted").queue(toolCall("bash", { command: "echo answered-with-oc-answer", description: "say it" }), text("Done after oc_answer."));
      // A client without elicitation gets the request back (BLOCKED), with the task still waiting on the worker.
      const r = await caller.call("oc_delegate", { task: "run the command oc_answer allows", rules: { bash: "ask" }, request_id: "fleet-answer" });
      expect(r.data.status, r.text).toBe("blocked");
      const [asked] = r.data.pending as Array<{ id: string; answer_with: string }>;
      expect(asked!.answer_with).toContain(`oc_answer {"request_id":"${asked!.id}","decision":"once"}`);
      const task = await queue.read("fleet-answer");
      const holder = holderOf(task);
      // opencode agrees: the request is open on the worker's opencode and the command has not run.
      // (opencode lists requests per directory instance: the session's.)
      const { directory } = await connect({ url: holder.url, password: holder.password }).call("session.get", { path: { sessionID: task.sessionId } });
      const oc = connect({ url: holder.url, password: holder.password, directory });
      expect((await oc.call("permission.list")).map((p) => p.id)).toContain(asked!.id);
      expect((await recorded(holder, task.sessionId)).tools).toEqual([expect.objectContaining({ tool: "bash", status: "running" })]);

      const other = servers.find((s) => s !== holder)!;
      answerer = await startMcp({ ...fleetMcpEnv(other), OPENCODE_CONDUCTOR_TOOLSETS: "delegate,approve,audit" });
      const pending = await answerer.call("oc_pending", {});
      expect(pending.data.requests).toEqual([
        expect.objectContaining({ kind: "permission", id: asked!.id, session_id: task.sessionId, what: "bash", answer_with: asked!.answer_with }),
      ]);
      const answered = await answerer.call("oc_answer", { request_id: asked!.id, decision: "once" });
      expect(answered.isError, answered.text).toBe(false);
      const done = await answerer.call("oc_wait", { session_id: "fleet-answer" }, { timeoutMs: 120_000 });
      expect(done.data.status, done.text).toBe("done");
      const rec = await recorded(holder, task.sessionId);
      expect(rec.tools).toEqual([expect.objectContaining({ tool: "bash", status: "completed", output: expect.stringContaining("answered-with-oc-answer") })]);
      expect(rec.completed).toBe(true);
      expect(done.data.answer).toBe(rec.answer);
      expect((await answerer.call("oc_pending", {})).data.requests).toEqual([]);
      // The audit names the calling model (through oc_answer, from this client) as who answered.
      const audit = await answerer.call("oc_audit", { tool: "oc_answer" });
      expect((audit.data.entries as Array<Record<string, unknown>>).filter((e) => (e.detail as { request_id?: string })?.request_id === asked!.id)).toEqual([
        expect.objectContaining({ by: "model", decision: "once", outcome: "ok", client: expect.objectContaining({ name: "e2e-test-client" }) }),
      ]);
    } finally {
      await answerer?.close();
      await caller.close();
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
    // The ttl test's 120 s retention removed the oldest completed jobs: a task finished after it.
    expect(ls).toContain("ledger-fleet");
    expect(cli("show", "kill-me")).toMatch(/2 attempts: 1 unreachable on wA|2 attempts: 1 unreachable on wB/);
  });
});
