// A workflow run seen and signed off in the web console, in a real headless Chromium against a
// real opencode (1.x and 2.x, test/support/workflow-majors.ts) with the scripted model: the run (test/support/workflow-suite.ts's sign-off
// workflow, with an agent step after the sign-off) is started through the real MCP server and
// stops at its approval step; the console shows its steps with the statuses and costs the run
// record holds; a click on Approve lets the run walk on to its end, from the console. Every agent
// turn the run recorded is compared with the session as opencode recorded it, re-read from it.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunStore } from "../../src/core/workflows/run-store.js";
import type { WorkflowRun } from "../../src/core/workflows/run-record.js";
import { startMcp, type McpSession } from "../support/mcp-client.js";
import type { TestOpencode } from "../support/opencode.js";
import { text } from "../support/scripted-model.js";
import { WORKFLOW_V1, WORKFLOW_V2 } from "../support/workflow-majors.js";
import { SIGN_OFF_WORKFLOW, type WorkflowMajor } from "../support/workflow-suite.js";
import { launchBrowser, startConsoleCli, type ConsoleProcess } from "./support.js";

// After the sign-off, one more agent step: the console's click must make the run do real work.
const WORKFLOW = `${SIGN_OFF_WORKFLOW}  - name: announce
    kind: agent
    prompt: "Announce the fix."
    isolation: shared
`;

let browser: Browser;

/** The page's money format (ui.js), applied to what the run record holds. */
const money = (n: number | undefined) => (typeof n === "number" ? `$${n.toFixed(4)}` : "–");
const stepCost = (s: WorkflowRun["steps"][number]) => {
  const costs = s.attempts.map((a) => a.cost).filter((c): c is number => c !== undefined);
  return costs.length ? costs.reduce((a, b) => a + b, 0) : undefined;
};

beforeAll(async () => {
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe.each([
  ["1.x", WORKFLOW_V1],
  ["2.x", WORKFLOW_V2],
] as Array<[string, WorkflowMajor]>)("workflow runs in the console (browser, opencode %s)", (_major, major) => {
  let oc: TestOpencode;
  let stateDir: string;
  let consoleProc: ConsoleProcess;
  let page: Page;
  let mcp: McpSession;

  /** Each agent turn of the run against opencode's record of its session: completed, the same answer. */
  async function expectRecorded(run: WorkflowRun): Promise<number> {
    let turns = 0;
    for (const step of run.steps.filter((s) => s.kind === "agent")) {
      for (const turn of step.attempts.flatMap((a) => a.turns ?? [])) {
        const last = await major.recorded(oc, turn.sessionId!);
        expect(last.completed, `${step.name}: ${turn.sessionId}`).toBe(true);
        expect(turn.status).toBe("done");
        expect(turn.answer).toBe(last.answer);
        turns++;
      }
    }
    return turns;
  }

  beforeAll(async () => {
    oc = await major.start();
    stateDir = join(oc.root, "state");
    mcp = await startMcp({
      OPENCODE_URL: oc.url,
      OPENCODE_PASSWORD: oc.password,
      OPENCODE_CONDUCTOR_DIRECTORY: oc.directory,
      OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
      OPENCODE_CONDUCTOR_TOOLSETS: "workflows",
      ...(await major.env()),
    });
    consoleProc = await startConsoleCli({ OPENCODE_PASSWORD: oc.password, OPENCODE_CONDUCTOR_STATE_DIR: stateDir });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(consoleProc.url);
  }, 240_000); // the 2.x binary may be built first on a fresh machine

  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
    await page?.context().close();
    await consoleProc?.stop();
    await oc?.stop();
  });

  it("shows the run's timeline with its recorded statuses and costs; Approve signs off as the console and the run walks on to its end", async () => {
    oc.model.for("scripted").queue(text("Fixed the crash."), text("Announced."));
    const started = await mcp.call("oc_workflow", { action: "start", text: WORKFLOW, inputs: { bug: "the crash" }, timeout_s: 300 }, { timeoutMs: 320_000 });
    expect(started.isError, started.text).toBe(false);
    const id = (started.data.run as { id: string }).id;
    const store = new RunStore(stateDir);
    const blocked = (await store.get(id))!;
    expect(blocked.status, started.text).toBe("blocked");

    await page.goto(`${consoleProc.origin}/#/workflows`);
    const row = page.locator(`[data-testid=workflow-row][data-run="${id}"]`);
    await row.waitFor({ timeout: 30_000 });
    expect(await row.textContent()).toContain(blocked.status);
    await row.getByRole("link").click();

    const steps = page.getByTestId("workflow-step");
    await expect.poll(() => steps.count(), { timeout: 30_000 }).toBe(blocked.steps.length);
    for (const [i, s] of blocked.steps.entries()) {
      const shown = steps.nth(i);
      expect(await shown.getAttribute("data-step")).toBe(s.name);
      expect(await shown.getAttribute("data-status")).toBe(s.status);
      expect(await shown.getByTestId("step-cost").textContent()).toBe(money(stepCost(s)));
      expect(await shown.getByTestId("attempt").count()).toBe(s.attempts.length);
    }
    const signOff = page.getByTestId("sign-off");
    const asked = blocked.steps[blocked.cursor]!.attempts.at(-1)!.asked!;
    expect(await signOff.getByTestId("sign-off-asked").textContent()).toBe(asked);
    expect(asked).toContain("Fixed the crash.");

    await signOff.getByRole("button", { name: "Approve" }).click();
    // The run walks on from the console; its end is read from the record, then from the page.
    await expect.poll(async () => (await store.get(id))?.status, { timeout: 180_000, interval: 500 }).toBe("done");
    const done = (await store.get(id))!;
    const approval = done.steps.find((s) => s.kind === "approval")!;
    expect(approval.status).toBe("done");
    expect(approval.attempts.at(-1)!.signOff).toMatchObject({ decision: "approve", by: "console" });
    expect(done.steps.map((s) => s.status)).toEqual(done.steps.map(() => "done"));
    expect(await expectRecorded(done)).toBe(2); // the fix and, after the sign-off, the announcement
    await expect.poll(() => page.getByTestId("run-status").textContent(), { timeout: 10_000 }).toBe("done");
    await expect.poll(() => page.locator("[data-testid=workflow-step][data-step=announce]").getAttribute("data-status"), { timeout: 10_000 }).toBe("done");
    expect(await page.getByTestId("signed-off").textContent()).toBe("approve by console");
    expect(await page.getByTestId("sign-off").count()).toBe(0);

    // The audit: the workflow's own answer entry says the console answered, and the console's entry.
    const audit = (await readFile(join(stateDir, "audit.jsonl"), "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { tool: string; outcome: string; decision?: string; by?: string; detail?: Record<string, unknown> });
    expect(audit).toContainEqual(
      expect.objectContaining({ tool: "workflow", outcome: "answered", decision: "approve", detail: expect.objectContaining({ run: id, by: "console" }) }),
    );
    expect(audit).toContainEqual(
      expect.objectContaining({ tool: "console", decision: "approve", by: "human (console)", detail: expect.objectContaining({ run: id }) }),
    );
  }, 400_000);
});
