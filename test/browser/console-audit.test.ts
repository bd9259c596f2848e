// The console's Audit view and its banner in a real headless Chromium, on a console (the built CLI)
// over a temp state dir of its own (no opencode needed: the task records name no server): pages
// newest first that go back with "older →" across a rotated segment and forth with "← newer", the
// newest page following the trail as it grows while an older one stays, and the banner that says
// the audit trail cannot be written, then goes by itself once it can.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, startConsoleCli, type ConsoleProcess } from "./support.js";

let browser: Browser;
let dir: string;
const START = Date.parse("2026-06-01T08:00:00.000Z");
const line = (n: number) =>
  `${JSON.stringify({ time: new Date(START + n * 60_000).toISOString(), tool: "oc_send", outcome: "ok", session_id: `ses_${String(n).padStart(3, "0")}` })}\n`;

beforeAll(async () => {
  browser = await launchBrowser();
  dir = mkdtempSync(join(tmpdir(), "occ-browser-audit-"));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function open(consoleProc: ConsoleProcess): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(consoleProc.url);
  return page;
}

/** The sessions of the rows shown, top to bottom. */
const sessions = (page: Page) => page.locator("[data-testid=audit-row] td:nth-child(4)").allTextContents();
const range = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => `ses_${String(from - i).padStart(3, "0")}`);

describe("the Audit view", () => {
  it("pages newest first across segments, follows the trail's growth on the newest page only", async () => {
    const stateDir = join(dir, "paged");
    mkdirSync(stateDir);
    const audit = join(stateDir, "audit.jsonl");
    for (let n = 0; n < 60; n++) appendFileSync(n < 30 ? `${audit}.1` : audit, line(n)); // a rotated segment, then the live file
    const consoleProc = await startConsoleCli({ OPENCODE_CONDUCTOR_STATE_DIR: stateDir });
    try {
      const page = await open(consoleProc);
      await page.goto(`${consoleProc.origin}/#/audit`);
      await page.locator("[data-testid=audit-row]", { hasText: "ses_059" }).waitFor();
      expect(await sessions(page)).toEqual(range(59, 35));
      const older = page.getByRole("button", { name: "older →" });
      const newer = page.getByRole("button", { name: "← newer" });
      expect(await newer.isDisabled()).toBe(true);
      await older.click();
      await page.locator("[data-testid=audit-row]", { hasText: "ses_034" }).waitFor();
      expect(await sessions(page)).toEqual(range(34, 10));
      await older.click();
      await page.locator("[data-testid=audit-row]", { hasText: "ses_009" }).waitFor();
      expect(await sessions(page)).toEqual(range(9, 0));
      expect(await older.isDisabled()).toBe(true);
      await newer.click();
      await page.locator("[data-testid=audit-row]", { hasText: "ses_034" }).waitFor();

      // An older page stays as it is when the trail grows, and offers the way back to the newest.
      appendFileSync(audit, line(60));
      await page.getByText("The trail grew since this page was read").waitFor({ timeout: 30_000 });
      expect(await sessions(page)).toEqual(range(34, 10));
      await page.getByRole("link", { name: "back to the newest" }).click();
      await page.locator("[data-testid=audit-row]", { hasText: "ses_060" }).waitFor();
      expect(await sessions(page)).toEqual(range(60, 36));
      // The newest page follows by itself.
      appendFileSync(audit, line(61));
      await page.locator("[data-testid=audit-row]", { hasText: "ses_061" }).waitFor({ timeout: 30_000 });
      expect(await sessions(page)).toEqual(range(61, 37));
    } finally {
      await consoleProc.stop();
    }
  });
});

describe("the banner", () => {
  it("says the audit trail cannot be written, and why, on every view; it goes by itself once it can be", async () => {
    const stateDir = join(dir, "unwritable");
    mkdirSync(stateDir);
    const audit = join(stateDir, "audit.jsonl");
    mkdirSync(audit); // a directory where the file should be
    const consoleProc = await startConsoleCli({ OPENCODE_CONDUCTOR_STATE_DIR: stateDir });
    try {
      const page = await open(consoleProc);
      const banner = page.getByTestId("unwritable");
      await banner.waitFor();
      expect(await banner.textContent()).toMatch(new RegExp(`Not written: the audit trail ${audit} cannot be written \\(since .*\\): EISDIR`));
      await page.goto(`${consoleProc.origin}/#/servers`);
      await banner.waitFor();
      rmSync(audit, { recursive: true });
      await banner.waitFor({ state: "detached", timeout: 30_000 }); // checked every 5 s, with no one acting
    } finally {
      await consoleProc.stop();
    }
  });
});
