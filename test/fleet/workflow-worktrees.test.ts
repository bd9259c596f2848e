// A "fix a bug" workflow whose fix runs in a worktree, on the fleet: a real redis-server, two
// opencode servers with the scripted model, two worker processes (no root: the project reaches
// them as its git remote, a local bare repository here) and the built MCP server with
// OPENCODE_CONDUCTOR_QUEUE. The fix is a `repo` task on a worker (a fresh worktree per attempt, its
// branch pushed back); the walker fetches the branch, runs the check in a checkout of it (a failed
// check sends the fix back, and the next attempt starts on a worker from the branch the first
// pushed), gives the reviewer (a repo task on a worker too) the branch's diff, and merges the branch
// into main. The MCP server walking the run is SIGKILLed while the first attempt runs; a second one
// resumes it from Redis and re-attaches that attempt (its model asked once). Every agent and review
// turn is compared with the session as the worker's opencode recorded it, re-read from that server.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import { TaskQueue } from "../../src/core/queue/client.js";
import type { RecordedTurn, WorkflowRun } from "../../src/core/workflows/run-record.js";
import type { McpSession } from "../support/mcp-client.js";
import { makeProjectDir, startOpencode, type TestOpencode } from "../support/opencode.js";
import { startScriptedModel, text, times, toolCall, type ScriptedModel } from "../support/scripted-model.js";
import { startWorker, type TestWorker } from "./support/fleet.js";
import { startRedis, type TestRedis } from "./support/redis.js";
import { APPROVE, chatsOf, FleetMcps } from "./support/workflow-fleet.js";
import { recorded, recordedOutcome } from "./support/truth.js";

const run = promisify(execFile);
const MODELS = { provider: { fake: { models: { fixer: { name: "Fixer" }, reviewer: { name: "Reviewer" } } } } };

const WORKFLOW = `name: fix a bug in a worktree on the fleet
inputs:
  bug: { description: What is wrong }
steps:
  - name: implement
    kind: agent
    isolation: worktree
    prompt: "Fix this bug: {{inputs.bug}}"
    model: fake/fixer
  - name: tests
    kind: check
    run: "grep -qx fixed fix.txt"
    on_fail: implement
  - name: review
    kind: review
    of: implement
    model: fake/reviewer
  - name: ship
    kind: deliver
    of: implement
    merge_into: main
`;

const FAN_OUT = `name: fix parts in worktrees on the fleet
inputs:
  parts: { description: "the parts, as a,b" }
steps:
  - name: implement
    kind: agent
    each: parts
    prompt: "Fix: {{item}}"
    model: fake/fixer
  - name: tests
    kind: check
    run: "ls fix-*.txt"
  - name: review
    kind: review
    of: implement
    model: fake/reviewer
  - name: ship
    kind: deliver
    of: implement
    merge_into: integration
`;

let redis: TestRedis;
let model: ScriptedModel;
let servers: TestOpencode[] = [];
let workers: TestWorker[] = [];
let queue: TaskQueue;
let project: string;
let origin: string;
const mcps = new FleetMcps(() => redis.url);
const mcp = (s: TestOpencode, name: string) => mcps.start(s, name);
const kill = (m: McpSession) => mcps.kill(m);

const git = async (cwd: string, ...args: string[]) =>
  (
    await run("git", ["-c", "user.email=test@example.invalid", "-c", "user.name=occ test", ...args], { cwd, env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } })
  ).stdout.trim();

const chats = (id: string) => chatsOf(model, id);

/** A fleet repo task's turn against the session its worker's opencode recorded (read in that attempt's directory). */
async function expectRecorded(turn: RecordedTurn, prompt?: string): Promise<void> {
  const holder = servers.find((s) => s.url === turn.queued?.server);
  expect(holder, `${turn.sessionId} ran on a server of the fleet`).toBeDefined();
  const task = await queue.read(turn.queued!.taskId);
  const directory = task.task.attempts.at(-1)!.directory;
  const rec = await recorded(holder!, turn.sessionId!, directory);
  expect(rec.completed).toBe(true);
  expect(turn.answer).toBe(rec.answer);
  expect(turn.status).toBe((await recordedOutcome(holder!, turn.sessionId!, directory)).status);
  if (prompt !== undefined) expect(rec.prompt).toBe(prompt);
}

beforeAll(async () => {
  redis = await startRedis();
  model = await startScriptedModel();
  servers = await Promise.all([startOpencode({ model, config: MODELS, gitInit: true }), startOpencode({ model, config: MODELS, gitInit: true })]);
  // The project as a user has it: a clone whose `origin` the workers can fetch and push to.
  project = await makeProjectDir(servers[0]!, "fix-project", { gitInit: true });
  origin = join(servers[0]!.root, "origin.git");
  await git(servers[0]!.root, "init", "--quiet", "--bare", "-b", "main", origin);
  await git(project, "remote", "add", "origin", origin);
  await git(project, "push", "--quiet", "origin", "main");
  workers = await Promise.all([
    startWorker({ id: "wtA", queueUrl: redis.url, opencode: servers[0]!, concurrency: 1 }),
    startWorker({ id: "wtB", queueUrl: redis.url, opencode: servers[1]!, concurrency: 1 }),
  ]);
  queue = new TaskQueue({ url: redis.url });
}, 120_000);

afterAll(async () => {
  await mcps.closeAll();
  await queue?.close();
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(servers.map((s) => s.stop()));
  await model?.close();
  await redis?.stop();
}, 120_000);

describe("a worktree step of a workflow on the fleet's queue", () => {
  it("runs the fix as repo tasks on the workers, checks, reviews and merges the pushed branch where the run is walked; a walker SIGKILLed under the fix is resumed without prompting again", async () => {
    model
      .for("fixer")
      .queue(
        toolCall("bash", { command: "echo wrong > fix.txt", description: "write the fix" }),
        text("Fixed it.", { delayMs: 6_000 }),
        toolCall("bash", { command: "echo fixed > fix.txt", description: "write the fix again" }),
        text("Fixed it properly."),
      );
    model.for("reviewer").queue(text(`The fix is right.\n${APPROVE}`));
    const before = { fixer: chats("fixer"), reviewer: chats("reviewer") };
    const mainBefore = await git(project, "rev-parse", "main");

    const first = await mcp(servers[0]!, "first");
    const started = await first.call("oc_workflow", {
      action: "start",
      text: WORKFLOW,
      inputs: { bug: "the fix is missing" },
      directory: project,
      timeout_s: 0,
    });
    expect(started.isError, started.text).toBe(false);
    const id = (started.data.run as { id: string }).id;
    // The first attempt's last reply is being streamed on a worker: the walker dies.
    await model.waitForRequests(before.fixer + 2, { model: "fixer", kind: "chat", timeoutMs: 180_000 });
    await kill(first);

    const second = await mcp(servers[1]!, "second");
    const resumed = await second.call("oc_workflow", { action: "resume", run: id, timeout_s: 300 }, { timeoutMs: 330_000 });
    expect(resumed.isError, resumed.text).toBe(false);
    expect((resumed.data.run as { status: string }).status, resumed.text).toBe("done");

    const reader = new Conductor({ url: servers[1]!.url, password: servers[1]!.password, queue: { url: redis.url } });
    let done: WorkflowRun;
    try {
      done = await reader.workflows.get(id);
    } finally {
      reader.close();
    }
    expect(done.steps.map((s) => [s.name, s.status, s.attempts.map((a) => a.status)])).toEqual([
      ["implement", "done", ["done", "done"]],
      ["tests", "done", ["failed", "done"]],
      ["review", "done", ["done"]],
      ["ship", "done", ["done"]],
    ]);
    // Each attempt asked the model once per reply (the re-attached one included), the reviewer once.
    expect(chats("fixer") - before.fixer).toBe(4);
    expect(chats("reviewer") - before.reviewer).toBe(1);

    const [one, two] = done.steps[0]!.attempts.map((a) => a.turns![0]!);
    for (const t of [one!, two!]) {
      expect(["wtA", "wtB"]).toContain(t.queued?.worker);
      expect(t.worktree).toMatchObject({ repo: origin, branch: `conductor/${t.queued!.taskId}` });
      // The branch the worker pushed, fetched here: the same commit on both sides.
      expect(await git(project, "rev-parse", t.worktree!.branch!)).toBe(t.worktree!.head);
      expect(await git(origin, "rev-parse", t.worktree!.branch!)).toBe(t.worktree!.head);
    }
    expect(one!.worktree!.base).toBe(mainBefore);
    // Sent back by the check: the second attempt started from the branch the first pushed.
    expect(two!.worktree!.base).toBe(one!.worktree!.head);
    await expectRecorded(one!, "Fix this bug: the fix is missing");
    expect(
      (
        await recorded(
          servers.find((s) => s.url === two!.queued!.server)!,
          two!.sessionId!,
          (await queue.read(two!.queued!.taskId)).task.attempts.at(-1)!.directory,
        )
      ).prompt,
    ).toContain("The check `grep -qx fixed fix.txt` failed (exit 1)");
    await expectRecorded(two!);

    // The check ran here, in checkouts of the fetched branches (none is left behind).
    expect(done.steps[1]!.attempts.map((a) => a.checks!.map((c) => [c.command, c.exit]))).toEqual([
      [["grep -qx fixed fix.txt", 1]],
      [["grep -qx fixed fix.txt", 0]],
    ]);
    expect(await git(project, "worktree", "list", "--porcelain")).not.toContain("conductor-checks");

    // The reviewer ran on a worker too, and was given the branch's diff against its base.
    const review = done.steps[2]!.attempts[0]!.turns![0]!;
    expect(["wtA", "wtB"]).toContain(review.queued?.worker);
    expect(review.worktree?.repo).toBe(origin);
    const reviewed = await recorded(
      servers.find((s) => s.url === review.queued!.server)!,
      review.sessionId!,
      (await queue.read(review.queued!.taskId)).task.attempts.at(-1)!.directory,
    );
    expect(reviewed.prompt).toContain("+fixed");
    await expectRecorded(review);
    expect(done.steps[2]!.attempts[0]!.verdict).toEqual({ verdict: "approve", comments: [] });

    // Delivered: main (checked out in the project) is now the last attempt's branch, fast-forwarded.
    expect(done.steps[3]!.attempts[0]!.delivered).toMatchObject({ into: "main", before: mainBefore, after: two!.worktree!.head });
    expect(await git(project, "rev-parse", "main")).toBe(two!.worktree!.head);
    expect(await git(project, "show", "main:fix.txt")).toBe("fixed");
    expect(await git(project, "status", "--porcelain")).toBe("");
  }, 600_000);

  it("runs a fan-out's worktree tasks on both workers and merges every pushed branch into a new branch; the reviewer reads them all", async () => {
    // Each task writes a file named after its worktree on the worker (no two collide). The tool
    // calls answer after a delay, so both sessions have taken theirs before either asks again.
    model
      .for("fixer")
      .queue(
        times(2, toolCall("bash", { command: 'echo fixed > "fix-$(basename "$PWD").txt"', description: "write the fix" }, { delayMs: 5_000 })),
        times(2, text("Fixed my part.")),
      );
    model.for("reviewer").queue(text(`Both parts are right.\n${APPROVE}`));
    const before = chats("fixer");
    const mainBefore = await git(project, "rev-parse", "main");
    // The workers start from main as origin has it (the first test merged into the local main only).
    const originMain = await git(origin, "rev-parse", "main");
    const walker = await mcp(servers[0]!, "fan-out");
    const r = await walker.call(
      "oc_workflow",
      { action: "start", text: FAN_OUT, inputs: { parts: "a,b" }, directory: project, timeout_s: 300 },
      { timeoutMs: 330_000 },
    );
    expect(r.isError, r.text).toBe(false);
    const reader = new Conductor({ url: servers[0]!.url, password: servers[0]!.password, queue: { url: redis.url } });
    let done: WorkflowRun;
    try {
      done = await reader.workflows.get((r.data.run as { id: string }).id);
    } finally {
      reader.close();
    }
    expect(done.status, r.text).toBe("done");
    expect(chats("fixer") - before).toBe(4);
    const turns = done.steps[0]!.attempts[0]!.turns!;
    expect(new Set(turns.map((t) => t.queued?.worker))).toEqual(new Set(["wtA", "wtB"]));
    for (const [i, t] of turns.entries()) {
      expect(t.worktree).toMatchObject({ repo: origin, base: originMain, branch: `conductor/${t.queued!.taskId}` });
      expect(await git(project, "rev-parse", t.worktree!.branch!)).toBe(t.worktree!.head);
      await expectRecorded(t, `Fix: ${["a", "b"][i]}`);
    }
    // The reviewer (on a worker, at the common base: there are two branches) was given both diffs.
    const review = done.steps[2]!.attempts[0]!.turns![0]!;
    expect(review.worktree).toEqual({ repo: origin, base: originMain });
    await expectRecorded(review);
    const reviewed = await recorded(
      servers.find((s) => s.url === review.queued!.server)!,
      review.sessionId!,
      (await queue.read(review.queued!.taskId)).task.attempts.at(-1)!.directory,
    );
    expect(reviewed.prompt.match(/\+fixed/g)).toHaveLength(2);
    // Delivered: `integration` created at the base, the first branch fast-forwarded, the second merged.
    const delivered = done.steps[3]!.attempts[0]!.delivered as { into: string; after: string; outcomes: Array<{ branch: string; result: string }> };
    expect(delivered.outcomes).toEqual([
      expect.objectContaining({ branch: turns[0]!.worktree!.branch, result: "fast-forward" }),
      expect.objectContaining({ branch: turns[1]!.worktree!.branch, result: "merged" }),
    ]);
    expect(await git(project, "rev-parse", "integration")).toBe(delivered.after);
    const changed = await Promise.all(turns.map((t) => git(project, "diff", "--name-only", t.worktree!.base!, t.worktree!.head!)));
    expect(new Set(changed).size).toBe(2);
    const files = (await git(project, "ls-tree", "--name-only", "integration")).split("\n");
    expect(files).toEqual(expect.arrayContaining(changed));
    expect(await git(project, "rev-parse", "main")).toBe(mainBefore);
    expect(await git(project, "status", "--porcelain")).toBe("");
  }, 600_000);

  it("refuses a worktree step on the fleet in a project without an `origin`, naming what to set", async () => {
    const bare = await makeProjectDir(servers[0]!, "no-origin", { gitInit: true });
    const walker = await mcp(servers[0]!, "no-origin");
    const before = chats("fixer");
    const r = await walker.call("oc_workflow", { action: "start", text: WORKFLOW, inputs: { bug: "x" }, directory: bare, timeout_s: 60 });
    const failed = r.data.run as { status: string; end?: { reason?: string } };
    expect(failed.status, r.text).toBe("failed");
    expect(r.text).toContain('git remote "origin"');
    expect(r.text).toContain("git remote add origin URL");
    expect(chats("fixer")).toBe(before);
  }, 120_000);
});
