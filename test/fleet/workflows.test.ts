// A workflow run unattended on the fleet: a real redis-server, two opencode servers with the
// scripted model, two worker processes (concurrency 1 each, both serving the project's directory
// as a root, as two machines on one shared volume) and the built MCP server with
// OPENCODE_CONDUCTOR_QUEUE. The "fix a bug" shape (the fix, a check, a review by a second model,
// a sign-off, then the release note): its agent and review steps are jobs the workers take. The
// MCP server that started it is SIGKILLed while the fixes run; a second one resumes the run from
// the fleet's Redis (the running batch re-attached: each fix's model asked once), stops at the
// sign-off (BLOCKED: nothing signs off by itself), and a third answers it, after which the last
// step runs on a worker too. Every step's recorded outcome is compared with the session as the
// opencode that ran it recorded it, re-read from that server.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import { TaskQueue } from "../../src/core/queue/client.js";
import type { McpSession } from "../support/mcp-client.js";
import { makeProjectDir, startOpencode, type TestOpencode } from "../support/opencode.js";
import { startScriptedModel, text, times, type ScriptedModel } from "../support/scripted-model.js";
import { startWorker, type TestWorker } from "./support/fleet.js";
import { startRedis, type TestRedis } from "./support/redis.js";
import { APPROVE, chatsOf, FleetMcps } from "./support/workflow-fleet.js";
import { recorded, recordedOutcome } from "./support/truth.js";

const MODELS = { provider: { fake: { models: { fixer: { name: "Fixer" }, reviewer: { name: "Reviewer" }, writer: { name: "Writer" } } } } };

const WORKFLOW = `name: fix two bugs on the fleet
inputs:
  bugs: { description: "the bugs, as a,b" }
steps:
  - name: implement
    kind: agent
    each: bugs
    prompt: "Fix: {{item}}"
    model: fake/fixer
  - name: tests
    kind: check
    run: "git rev-parse --git-dir"
    on_fail: implement
  - name: review
    kind: review
    of: implement
    model: fake/reviewer
  - name: sign-off
    kind: approval
    message: "Ship the fixes for {{inputs.bugs}}?"
  - name: notes
    kind: agent
    prompt: "Write the release note for: {{inputs.bugs}}"
    model: fake/writer
`;

type Turn = { session_id: string; status: string; answer: string; task?: { id: string; worker?: string } };
type Run = {
  id: string;
  status: string;
  step?: string;
  steps: Array<{ name: string; kind: string; status: string; attempts: Array<{ turns?: Turn[]; sign_off?: Record<string, unknown> }> }>;
};
const runOf = (data: Record<string, unknown>) => data.run as Run;

let redis: TestRedis;
let model: ScriptedModel;
let servers: TestOpencode[] = [];
let workers: TestWorker[] = [];
let queue: TaskQueue;
let project: string;
const mcps = new FleetMcps(() => redis.url);
const mcp = (s: TestOpencode, name: string) => mcps.start(s, name);
const kill = (m: McpSession) => mcps.kill(m);

const chats = (id: string) => chatsOf(model, id);

beforeAll(async () => {
  redis = await startRedis();
  model = await startScriptedModel();
  servers = await Promise.all([startOpencode({ model, config: MODELS, gitInit: true }), startOpencode({ model, config: MODELS, gitInit: true })]);
  // The project both workers see at the same path (a shared volume on two machines).
  project = await makeProjectDir(servers[0]!, "shared-project", { gitInit: true });
  workers = await Promise.all([
    startWorker({ id: "wfA", queueUrl: redis.url, opencode: servers[0]!, concurrency: 1, roots: [project] }),
    startWorker({ id: "wfB", queueUrl: redis.url, opencode: servers[1]!, concurrency: 1, roots: [project] }),
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

/** Each agent and review turn against the session as the opencode that ran it recorded it (the fleet's index names the server). */
async function expectRecorded(run: Run, prompts: Record<string, string[]>): Promise<void> {
  let turns = 0;
  for (const step of run.steps.filter((s) => s.kind === "agent" || s.kind === "review")) {
    for (const attempt of step.attempts) {
      for (const [i, turn] of (attempt.turns ?? []).entries()) {
        const access = await queue.serverOf(turn.session_id);
        const holder = servers.find((s) => s.url === access?.url);
        expect(holder, `${step.name}: ${turn.session_id} is on a server of the fleet`).toBeDefined();
        const rec = await recorded(holder!, turn.session_id, project);
        expect(rec.completed, `${step.name}: ${turn.session_id}`).toBe(true);
        expect(turn.answer).toBe(rec.answer);
        expect(turn.status).toBe((await recordedOutcome(holder!, turn.session_id, project)).status);
        if (prompts[step.name]) expect(rec.prompt).toBe(prompts[step.name]![i]);
        turns++;
      }
    }
  }
  expect(turns).toBeGreaterThan(0);
}

describe("a workflow on the fleet's queue", () => {
  it("runs its steps on both workers; survives the starting MCP server's SIGKILL (re-attached, the model asked once per step); stops at the sign-off and goes on after an answer from a third server", async () => {
    model.for("fixer").queue(times(2, text("Fixed it.", { delayMs: 6_000 })));
    model.for("reviewer").queue(text(`Both fixes look right.\n${APPROVE}`));
    model.for("writer").queue(text("Fixed a and b."));
    const before = { fixer: chats("fixer"), reviewer: chats("reviewer"), writer: chats("writer") };

    const first = await mcp(servers[0]!, "first");
    const started = await first.call("oc_workflow", { action: "start", text: WORKFLOW, inputs: { bugs: "a,b" }, directory: project, timeout_s: 0 });
    expect(started.isError, started.text).toBe(false);
    const id = runOf(started.data).id;
    // The run is the fleet's: in its Redis, not in the first server's state dir.
    expect(await queue.redis.exists(`occ:fleet:workflow-run:${id}`)).toBe(1);
    // Both fixes are running, one on each worker (each takes one task at a time): then the crash.
    await model.waitForRequests(before.fixer + 2, { model: "fixer", kind: "chat", timeoutMs: 180_000 });
    await kill(first);

    const second = await mcp(servers[1]!, "second");
    const listed = await second.call("oc_workflow", { action: "list", directory: project });
    expect(listed.data.runs, listed.text).toEqual(expect.arrayContaining([expect.objectContaining({ id, status: "running", step: "implement" })]));
    const resumed = await second.call("oc_workflow", { action: "resume", run: id, timeout_s: 300 }, { timeoutMs: 330_000 });
    expect(resumed.isError, resumed.text).toBe(false);
    const blocked = runOf(resumed.data);
    // A headless caller (no form elicitation) gets BLOCKED, and the run waits: never an automatic yes.
    expect(blocked.status, resumed.text).toBe("blocked");
    expect(resumed.text).toContain("BLOCKED: a person must sign off: Ship the fixes for a,b?");
    expect(blocked.steps.map((s) => [s.name, s.status, s.attempts.length])).toEqual([
      ["implement", "done", 1],
      ["tests", "done", 1],
      ["review", "done", 1],
      ["sign-off", "blocked", 1],
      ["notes", "pending", 0],
    ]);
    // Re-attached to the batch the dead server had queued: each fix's model asked once.
    expect(chats("fixer") - before.fixer).toBe(2);
    expect(chats("reviewer") - before.reviewer).toBe(1);
    const fixes = blocked.steps[0]!.attempts[0]!.turns!;
    expect(new Set(fixes.map((t) => t.task?.worker))).toEqual(new Set(["wfA", "wfB"]));
    await expectRecorded(blocked, { implement: ["Fix: a", "Fix: b"] });
    await second.close();
    mcps.open.splice(mcps.open.indexOf(second), 1);

    // A third server (neither the one that started the run nor the one that resumed it) signs off.
    const third = await mcp(servers[0]!, "third");
    const status = await third.call("oc_workflow", { action: "status", run: id });
    expect(runOf(status.data).status).toBe("blocked");
    const answered = await third.call("oc_workflow", { action: "answer", run: id, approve: true, comment: "ship it", timeout_s: 300 }, { timeoutMs: 330_000 });
    expect(answered.isError, answered.text).toBe(false);
    const done = runOf(answered.data);
    expect(done.status, answered.text).toBe("done");
    expect(done.steps[3]!.attempts[0]!.sign_off).toMatchObject({ decision: "approve", by: "model", comment: "ship it" });
    const note = done.steps[4]!.attempts[0]!.turns!;
    expect(note.map((t) => [t.status, t.answer])).toEqual([["done", "Fixed a and b."]]);
    expect(["wfA", "wfB"]).toContain(note[0]!.task?.worker);
    expect(chats("writer") - before.writer).toBe(1);
    expect(chats("fixer") - before.fixer).toBe(2);
    await expectRecorded(done, { implement: ["Fix: a", "Fix: b"], notes: ["Write the release note for: a,b"] });
  }, 600_000);

  it("is cancelled from another MCP server while a step runs on a worker: the worker interrupts the turn (as opencode recorded it), the run ends cancelled", async () => {
    model.for("fixer").queue(text("never gets here", { delayMs: 120_000 }));
    const before = chats("fixer");
    const walker = await mcp(servers[0]!, "walker");
    const started = await walker.call("oc_workflow", { action: "start", text: WORKFLOW, inputs: { bugs: "c" }, directory: project, timeout_s: 0 });
    expect(started.isError, started.text).toBe(false);
    const id = runOf(started.data).id;
    await model.waitForRequests(before + 1, { model: "fixer", kind: "chat", timeoutMs: 180_000 });

    const other = await mcp(servers[1]!, "canceller");
    const asked = await other.call("oc_workflow", { action: "cancel", run: id });
    expect(asked.isError, asked.text).toBe(false);
    // The walker (the first server, alive) ends the run once the interrupted step comes back.
    const reader = new Conductor({ url: servers[1]!.url, password: servers[1]!.password, queue: { url: redis.url } });
    try {
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
    } finally {
      reader.close();
    }
    expect(chats("fixer") - before).toBe(1);
  }, 300_000);
});
