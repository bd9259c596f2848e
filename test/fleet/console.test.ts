// The web console over the fleet's queue in a real headless Chromium: a real redis-server, a worker
// process on a real opencode with the scripted model, and `opencode-conductor console` with
// OPENCODE_CONDUCTOR_QUEUE. The page lists the queue's tasks and the worker, cancels a running task,
// and answers a permission request that waits in the worker's session; opencode's record says what
// came of both.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import { TaskQueue } from "../../src/core/queue/client.js";
import { launchBrowser, startConsoleCli, type ConsoleProcess } from "../browser/support.js";
import { startOpencode, type TestOpencode } from "../support/opencode.js";
import { hang, startScriptedModel, text, times, toolCall, type ScriptedModel } from "../support/scripted-model.js";
import { startWorker, type TestWorker } from "./support/fleet.js";
import { startRedis, type TestRedis } from "./support/redis.js";
import { recorded, recordedOutcome } from "./support/truth.js";

const MODELS = { provider: { fake: { models: { slow: { name: "Slow" } } } } };

let redis: TestRedis;
let model: ScriptedModel;
let oc: TestOpencode;
let worker: TestWorker;
let queue: TaskQueue;
let consoleProc: ConsoleProcess;
let stateDir: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  redis = await startRedis();
  model = await startScriptedModel();
  oc = await startOpencode({ model, config: MODELS });
  worker = await startWorker({ id: "wConsole", queueUrl: redis.url, opencode: oc });
  queue = new TaskQueue({ url: redis.url });
  stateDir = await mkdtemp(join(tmpdir(), "occ-console-state-"));
  consoleProc = await startConsoleCli({ OPENCODE_CONDUCTOR_QUEUE: redis.url, OPENCODE_CONDUCTOR_STATE_DIR: stateDir });
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(consoleProc.url);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await consoleProc?.stop();
  await queue?.close();
  await worker?.stop();
  await oc?.stop();
  await model?.close();
  await redis?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 120_000);

describe("the console over the fleet's queue", () => {
  it("shows the queue and the worker, and cancels a running task from the page", async () => {
    // Every request of the turn hangs: opencode's chunkTimeout (2 s) may retry the first before the
    // click comes on a loaded machine, and the retry must find the model as stuck as the first.
    model.for("slow").queue(times(6, hang()));
    const started = await queue.delegate({ task: "cancel me from the console", model: "fake/slow", wait: false, requestId: "console-cancel" });
    await model.waitForRequests(1, { model: "slow", timeoutMs: 60_000 });
    await page.goto(`${consoleProc.origin}/#/queue`);
    const workerRow = page.locator("[data-testid=worker-row][data-worker=wConsole]");
    await workerRow.waitFor({ timeout: 30_000 });
    await expect.poll(() => workerRow.locator("[data-testid=worker-load]").textContent(), { timeout: 30_000 }).toBe("1/4");
    const row = page.locator(`[data-testid=queue-row][data-task=${started.task.id}]`);
    await row.waitFor({ timeout: 30_000 });
    expect(await row.locator("[data-testid=queue-worker]").textContent()).toBe("wConsole");
    expect(await row.locator("[data-testid=queue-attempts]").textContent()).toContain("1 running on wConsole");
    await row.getByRole("button", { name: "Cancel" }).click();
    // The page reads the queue again once the cancel answered: the row is finished, its attempt cancelled.
    await expect.poll(() => row.getAttribute("data-state"), { timeout: 60_000 }).toBe("finished");
    expect(await row.locator("[data-testid=queue-attempts]").textContent()).toContain("1 cancelled on wConsole");
    expect(await row.getByRole("button", { name: "Cancel" }).count()).toBe(0);
    model.for("slow").clear();
    const after = await queue.read(started.task.id);
    expect(after.status).toBe("interrupted");
    // The claim is opencode's record: an abort during the stream leaves MessageAbortedError on the
    // reply; one during a retry wait (the chunkTimeout ran out first) completes the reply with
    // neither an error nor a finish reason. Both are an interrupted turn.
    await expect.poll(async () => (await recordedOutcome(oc, after.sessionId)).status, { timeout: 30_000 }).toBe("interrupted");
    const truth = await recordedOutcome(oc, after.sessionId);
    if (truth.error) expect(after.error?.name).toBe(truth.error.name);
  });

  it("answers a permission request of a worker's session in the Approvals view: the task ends done, as opencode recorded", async () => {
    model.for("scripted").queue(toolCall("bash", { command: "echo approved-in-the-console", description: "say it" }), text("Done after a console approval."));
    const started = await queue.delegate({ task: "run the console command", permissions: { bash: "ask" }, wait: false, requestId: "console-ask" });
    await page.goto(`${consoleProc.origin}/#/approvals`);
    const card = page.locator("[data-testid=pending]", { hasText: "bash" });
    await card.waitFor({ timeout: 90_000 });
    expect(await card.locator("[data-testid=pending-task]").textContent()).toContain("console-ask");
    await card.getByRole("button", { name: "Allow once" }).click();
    const r = await queue.wait(started.task.id, { timeoutMs: 120_000, returnOnBlocked: false });
    expect(r.status, JSON.stringify(r.error)).toBe("done");
    const c = new Conductor({ url: oc.url, password: oc.password, directory: oc.directory, queue: false });
    try {
      const messages = await c.client.call("session.messages", { path: { sessionID: r.sessionId } });
      const bash = messages.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.tool === "bash") as
        { state: { status: string; output?: string } } | undefined;
      expect(bash?.state.status).toBe("completed");
      expect(bash?.state.output).toContain("approved-in-the-console");
    } finally {
      c.close();
    }
    expect(r.answer).toBe((await recorded(oc, r.sessionId)).answer);
    await card.waitFor({ state: "detached", timeout: 30_000 });
  });
});
