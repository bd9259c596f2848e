// The web console over workflow runs kept in the fleet's Redis: a real redis-server, a worker
// process on a real opencode with the scripted model, the built MCP server with
// OPENCODE_CONDUCTOR_QUEUE that starts a run (its agent step a job the worker takes) and stops at
// its sign-off, and `opencode-conductor console` with the same queue. The console's HTTP API lists
// the run and shows it as Redis holds it (timeline, cost per step, the sign-off that waits), its
// answer walks the run on from the console (the last agent step is queued for the worker, too) to
// its end, and with Redis down each read and the answer say so within a bound. Then the same in a
// real headless Chromium: the Workflows view lists a second such run as kept in the fleet's Redis,
// its page shows the timeline and the sign-off, and a click on Approve ends it. Every agent turn
// is compared with the session as the worker's opencode recorded it, re-read from that server.
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import { TaskQueue } from "../../src/core/queue/client.js";
import type { WorkflowRun } from "../../src/core/workflows/run-record.js";
import { launchBrowser, startConsoleCli, type ConsoleProcess } from "../browser/support.js";
import { startMcp, type McpSession } from "../support/mcp-client.js";
import { makeProjectDir, startOpencode, type TestOpencode } from "../support/opencode.js";
import { startScriptedModel, text, type ScriptedModel } from "../support/scripted-model.js";
import { startWorker, type TestWorker } from "./support/fleet.js";
import { startRedis, type TestRedis } from "./support/redis.js";
import { recorded, recordedOutcome } from "./support/truth.js";

const MODELS = { provider: { fake: { models: { fixer: { name: "Fixer" }, writer: { name: "Writer" } } } } };

const WORKFLOW = `name: fix signed off in the console
steps:
  - name: implement
    kind: agent
    prompt: "Fix the console bug"
    model: fake/fixer
  - name: sign-off
    kind: approval
    message: "Ship the console fix?"
  - name: notes
    kind: agent
    prompt: "Write the release note for the console fix"
    model: fake/writer
`;

type Listed = { runs: Array<{ id: string; status: string; step?: string; store: string; cost?: number }>; stores: string[]; redis_error?: string };
type Shown = { run: WorkflowRun; store: string; cost?: number; error?: string };

let redis: TestRedis;
let model: ScriptedModel;
let oc: TestOpencode;
let worker: TestWorker;
let queue: TaskQueue;
let project: string;
let mcp: McpSession | undefined;
let consoleProc: ConsoleProcess;
let cookie: string;
let browser: Browser | undefined;

/** The page's money format (ui.js), applied to what the run record holds. */
const money = (n: number | undefined) => (typeof n === "number" ? `$${n.toFixed(4)}` : "–");
const stepCost = (s: WorkflowRun["steps"][number]) => {
  const costs = s.attempts.map((a) => a.cost).filter((c): c is number => typeof c === "number");
  return costs.length ? costs.reduce((a, b) => a + b, 0) : undefined;
};

/** An MCP server of the fleet (its opencode, a state dir of its own, the queue) starts the run; it stops at its sign-off. */
async function startBlocked(): Promise<string> {
  mcp = await startMcp({
    OPENCODE_URL: oc.url,
    OPENCODE_PASSWORD: oc.password,
    OPENCODE_CONDUCTOR_QUEUE: redis.url,
    OPENCODE_CONDUCTOR_STATE_DIR: join(oc.root, "state-mcp"),
    OPENCODE_CONDUCTOR_TOOLSETS: "workflows",
  });
  try {
    const started = await mcp.call("oc_workflow", { action: "start", text: WORKFLOW, directory: project, timeout_s: 300 }, { timeoutMs: 330_000 });
    expect(started.isError, started.text).toBe(false);
    expect((started.data.run as { status: string }).status, started.text).toBe("blocked");
    return (started.data.run as { id: string }).id;
  } finally {
    await mcp.close();
    mcp = undefined;
  }
}

const chats = (id: string) => model.requests.filter((r) => r.kind === "chat" && r.model === id).length;

async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${consoleProc.origin}${path}`, {
    method: init.method ?? "GET",
    headers: { cookie, ...(init.body ? { "content-type": "application/json", origin: consoleProc.origin } : {}) },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as T };
}

beforeAll(async () => {
  redis = await startRedis();
  model = await startScriptedModel();
  oc = await startOpencode({ model, config: MODELS, gitInit: true });
  project = await makeProjectDir(oc, "console-project", { gitInit: true });
  worker = await startWorker({ id: "wfConsole", queueUrl: redis.url, opencode: oc, concurrency: 1, roots: [project] });
  queue = new TaskQueue({ url: redis.url });
  // The console as a user of the fleet starts it: the queue and a state dir of its own (no run is in it).
  consoleProc = await startConsoleCli({ OPENCODE_CONDUCTOR_QUEUE: redis.url, OPENCODE_CONDUCTOR_STATE_DIR: join(oc.root, "state-console") });
  const signIn = await fetch(consoleProc.url, { redirect: "manual" });
  cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await mcp?.close();
  await consoleProc?.stop();
  await queue?.close();
  await worker?.stop();
  await oc?.stop();
  await model?.close();
  await redis?.stop();
}, 120_000);

/** Each agent turn of the run against the session as the opencode that ran it recorded it. */
async function expectRecorded(run: WorkflowRun, prompts: Record<string, string>): Promise<number> {
  let turns = 0;
  for (const step of run.steps.filter((s) => s.kind === "agent")) {
    for (const attempt of step.attempts) {
      for (const turn of attempt.turns ?? []) {
        expect(turn.queued?.worker, `${step.name}: a job of the worker`).toBe("wfConsole");
        expect(turn.queued?.server).toBe(oc.url);
        const rec = await recorded(oc, turn.sessionId!, project);
        expect(rec.completed, `${step.name}: ${turn.sessionId}`).toBe(true);
        expect(rec.prompt).toBe(prompts[step.name]);
        expect(turn.answer).toBe(rec.answer);
        expect(turn.status).toBe((await recordedOutcome(oc, turn.sessionId!, project)).status);
        expect(turn.cost ?? 0).toBeCloseTo(await recordedCost(turn.sessionId!), 10);
        turns++;
      }
    }
  }
  return turns;
}

/** What opencode recorded the session's replies cost (each assistant message's cost, added up). */
async function recordedCost(sessionId: string): Promise<number> {
  const c = new Conductor({ url: oc.url, password: oc.password, directory: project, queue: false });
  try {
    const messages = await c.client.call("session.messages", { path: { sessionID: sessionId } });
    return messages.reduce((sum, m) => sum + (m.info.role === "assistant" ? m.info.cost : 0), 0);
  } finally {
    c.close();
  }
}

/** The run as the fleet's Redis holds it, read through the library (the store every MCP server of the fleet uses). */
async function inRedis(id: string): Promise<WorkflowRun> {
  const reader = new Conductor({ url: oc.url, password: oc.password, queue: { url: redis.url } });
  try {
    return await reader.workflows.get(id);
  } finally {
    reader.close();
  }
}

describe("the console over workflow runs kept in the fleet's Redis", () => {
  it("lists and shows a run an MCP server of the fleet stopped at its sign-off; the console's answer walks it on (its next step a job for the worker) to its end", async () => {
    model.for("fixer").queue(text("Fixed the console bug."));
    model.for("writer").queue(text("Fixed the console bug (signed off in the console)."));
    const before = { fixer: chats("fixer"), writer: chats("writer") };

    const id = await startBlocked();

    // Listed from Redis (the console's state dir holds no run), with its store said.
    const listed = await api<Listed>("/api/workflows");
    expect(listed.status).toBe(200);
    expect(listed.body.stores).toEqual(["redis", "state_dir"]);
    expect(listed.body.redis_error).toBeUndefined();
    const row = listed.body.runs.find((r) => r.id === id);
    expect(row).toMatchObject({ id, status: "blocked", step: "sign-off", store: "redis" });

    // Shown as Redis holds it: the timeline, the cost per step, the sign-off that waits.
    const shown = await api<Shown>(`/api/workflows/${id}`);
    expect(shown.status, shown.body.error).toBe(200);
    expect(shown.body.store).toBe("redis");
    const kept = await inRedis(id);
    expect(shown.body.run).toEqual(kept);
    expect(shown.body.run.steps.map((s) => [s.name, s.status, s.attempts.length])).toEqual([
      ["implement", "done", 1],
      ["sign-off", "blocked", 1],
      ["notes", "pending", 0],
    ]);
    const signOff = shown.body.run.steps[1]!.attempts[0]!;
    expect(signOff.asked).toBe("Ship the console fix?");
    expect(signOff.signOff).toBeUndefined();
    // The step's cost is its turns' as opencode recorded them (checked per turn below), the run's their sum.
    const fix = shown.body.run.steps[0]!.attempts[0]!;
    expect(fix.cost ?? 0).toBeCloseTo(await recordedCost(fix.turns![0]!.sessionId!), 10);
    expect(shown.body.cost ?? 0).toBeCloseTo(fix.cost ?? 0, 10);
    expect(row!.cost).toBe(shown.body.cost);
    expect(await expectRecorded(shown.body.run, { implement: "Fix the console bug" })).toBe(1);
    expect(chats("fixer") - before.fixer).toBe(1);
    expect(chats("writer") - before.writer).toBe(0);

    // The console's answer: the run goes on from the console's process, its last step queued for the worker.
    const answered = await api<{ ok?: boolean; status?: string; store?: string; error?: string }>(`/api/workflows/${id}/answer`, {
      method: "POST",
      body: { decision: "approve", comment: "ship it from the console" },
    });
    expect(answered.status, answered.body.error).toBe(200);
    expect(answered.body).toMatchObject({ ok: true, status: "running", store: "redis" });
    await expect.poll(async () => (await api<Shown>(`/api/workflows/${id}`)).body.run?.status, { timeout: 240_000, interval: 500 }).toBe("done");
    const done = (await api<Shown>(`/api/workflows/${id}`)).body;
    expect(done.store).toBe("redis");
    expect(done.run).toEqual(await inRedis(id));
    expect(done.run.steps.map((s) => [s.name, s.status, s.attempts.length])).toEqual([
      ["implement", "done", 1],
      ["sign-off", "done", 1],
      ["notes", "done", 1],
    ]);
    expect(done.run.steps[1]!.attempts[0]!.signOff).toMatchObject({ decision: "approve", by: "console", comment: "ship it from the console" });
    const note = done.run.steps[2]!.attempts[0]!.turns!;
    expect(note.map((t) => t.status)).toEqual(["done"]);
    // A job of the fleet: the queue holds the task the worker ran, with the same session.
    const task = await queue.read(note[0]!.queued!.taskId);
    expect(task.status).toBe("done");
    expect(task.sessionId).toBe(note[0]!.sessionId);
    expect(await expectRecorded(done.run, { implement: "Fix the console bug", notes: "Write the release note for the console fix" })).toBe(2);
    expect(chats("writer") - before.writer).toBe(1);
    expect(chats("fixer") - before.fixer).toBe(1);
    expect((await api<Listed>("/api/workflows")).body.runs.find((r) => r.id === id)).toMatchObject({ status: "done", store: "redis" });
    // A second answer: the api's refusal, said as such (not taken for a Redis failure), and the record unchanged.
    const again = await api<{ error?: string }>(`/api/workflows/${id}/answer`, { method: "POST", body: { decision: "reject" } });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe(`Run ${id} waits for no sign-off (it is done).`);
    expect(await inRedis(id)).toEqual(done.run);

    // Redis down: each read and the answer say so, bounded; the console stays up and reads again once Redis is back.
    await redis.down();
    try {
      const said = /^The fleet's Redis \(redis:\/\/127\.0\.0\.1:\d+\/?\) (did not answer within 15 s|failed) while /;
      const list = await api<Listed>("/api/workflows");
      expect(list.status).toBe(200);
      expect(list.body.runs).toEqual([]);
      expect(list.body.redis_error).toMatch(said);
      const one = await api<Shown>(`/api/workflows/${id}`);
      expect(one.status).toBe(503);
      expect(one.body.error).toMatch(said);
      const refused = await api<{ error?: string }>(`/api/workflows/${id}/answer`, { method: "POST", body: { decision: "approve" } });
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatch(said);
      expect(consoleProc.child.exitCode).toBeNull();
    } finally {
      await redis.up();
    }
    await expect
      .poll(async () => (await api<Listed>("/api/workflows")).body.runs.find((r) => r.id === id)?.status, { timeout: 60_000, interval: 500 })
      .toBe("done");
  }, 600_000);

  it("in the browser: the Workflows view lists a run kept in Redis as such, shows its timeline and sign-off, and Approve ends it", async () => {
    model.for("fixer").queue(text("Fixed the console bug again."));
    model.for("writer").queue(text("Release note, approved in the page."));
    const before = { fixer: chats("fixer"), writer: chats("writer") };
    const id = await startBlocked();
    const blocked = await inRedis(id);
    expect(blocked.status).toBe("blocked");

    browser = await launchBrowser();
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await page.goto(consoleProc.url);
    await page.goto(`${consoleProc.origin}/#/workflows`);
    const row = page.locator(`[data-testid=workflow-row][data-run="${id}"]`);
    await row.waitFor({ timeout: 30_000 });
    expect(await row.getByTestId("workflow-store").textContent()).toBe("the fleet's Redis");
    expect(await row.textContent()).toContain("blocked");
    expect(await page.getByTestId("redis-error").count()).toBe(0);
    await row.getByRole("link").click();

    expect(await page.getByTestId("run-store").textContent()).toBe("the fleet's Redis");
    const steps = page.getByTestId("workflow-step");
    await expect.poll(() => steps.count(), { timeout: 30_000 }).toBe(blocked.steps.length);
    for (const [i, s] of blocked.steps.entries()) {
      const shown = steps.nth(i);
      expect(await shown.getAttribute("data-step")).toBe(s.name);
      expect(await shown.getAttribute("data-status")).toBe(s.status);
      expect(await shown.getByTestId("step-cost").textContent()).toBe(money(stepCost(s)));
      expect(await shown.getByTestId("attempt").count()).toBe(s.attempts.length);
    }
    expect(await page.getByTestId("turn-worker").first().textContent()).toBe("on worker wfConsole");
    const signOff = page.getByTestId("sign-off");
    expect(await signOff.getByTestId("sign-off-asked").textContent()).toBe("Ship the console fix?");

    await signOff.getByRole("button", { name: "Approve" }).click();
    await expect.poll(async () => (await inRedis(id)).status, { timeout: 240_000, interval: 500 }).toBe("done");
    const done = await inRedis(id);
    expect(done.steps[1]!.attempts[0]!.signOff).toMatchObject({ decision: "approve", by: "console" });
    expect(await expectRecorded(done, { implement: "Fix the console bug", notes: "Write the release note for the console fix" })).toBe(2);
    expect(chats("fixer") - before.fixer).toBe(1);
    expect(chats("writer") - before.writer).toBe(1);
    await expect.poll(() => page.getByTestId("run-status").textContent(), { timeout: 10_000 }).toBe("done");
    expect(await page.getByTestId("signed-off").textContent()).toBe("approve by console");
    expect(await page.getByTestId("sign-off").count()).toBe(0);
  }, 600_000);
});
