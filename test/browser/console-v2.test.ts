// The web console against a real opencode 2.x server (built from the vendored source; v2 API only,
// no v1 route), in Debian's headless Chromium through playwright-core, with the real MCP server
// (OPENCODE_CONDUCTOR_APPROVALS=return: a blocked task comes back at once and the console answers
// it) on the same state dir. A task that asks for a shell permission: its row and the approval
// appear, "Allow once" is clicked, the answer streams into the task page as it happens, the task
// ends done, and what the page shows agrees with the session re-read from the 2.x server. A
// question (a form on 2.x) is answered in the page. The server row shows 2.x's version; the
// server password reaches no response and no live event.
import { mkdtemp, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { connectV2, type OpencodeV2Client } from "../../src/client/v2/index.js";
import { startMcp, type McpSession } from "../support/mcp-client.js";
import type { TestOpencode } from "../support/opencode.js";
import { startOpencode2, type V2Message } from "../support/opencode2.js";
import { text, toolCall } from "../support/scripted-model.js";
import { launchBrowser, recordResponses, startConsoleCli, type ConsoleProcess, type Recorded } from "./support.js";
import { COLOUR_QUESTION } from "../support/questions.js";

const HTTP_TOKEN = "console-v2-test-http-token-4242424242";
/** The agent's answer after the approval, streamed in four pieces a second and a half apart. */
const ANSWER = "Ran the approved command; approved.txt now holds the word approved.";
const PIECES = 4;

let oc: TestOpencode;
let v2: OpencodeV2Client;
let stateDir: string;
let consoleProc: ConsoleProcess;
let mcp: McpSession;
let browser: Browser;
let page: Page;
let responses: Recorded[];
let streamed = "";
const stopStream = new AbortController();

async function recorded(sessionID: string): Promise<V2Message[]> {
  const listed = (await v2.request("session.messages", { path: { sessionID }, query: { order: "asc", limit: "200" } })) as { data: V2Message[] };
  return listed.data;
}

/** The texts and tool calls of a session as the 2.x server recorded them, in order. */
function recordedTranscript(messages: V2Message[]): string[] {
  return messages.flatMap((m) =>
    m.type === "user"
      ? [`task: ${m.text}`]
      : (m.content ?? []).flatMap((c) => (c.type === "text" ? [`agent: ${c.text}`] : c.type === "tool" ? [`tool ${c.name}: ${c.state?.status}`] : [])),
  );
}

/** The same, as the task page shows it. */
function pageTranscript(): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll("[data-testid=transcript] > *")).flatMap((el) => {
      if (el.matches("[data-testid=part-text]")) return [`${el.querySelector(".who")!.textContent}: ${el.querySelector("pre")!.textContent}`];
      if (el.matches("[data-testid=part-tool]")) {
        const summary = el.querySelector("summary")!;
        return [`tool ${summary.querySelector("code")!.textContent}: ${summary.querySelector("span")!.textContent}`];
      }
      return [];
    }),
  );
}

const row = (sessionId: string) => page.locator(`[data-testid=task-row][data-session="${sessionId}"]`);

beforeAll(async () => {
  browser = await launchBrowser();
  // The pre-release has no per-session permission rules: the server asks before every shell call.
  oc = await startOpencode2({ gitInit: true, permission: { shell: "ask" } });
  v2 = await connectV2({ url: oc.url, password: oc.password });
  stateDir = await mkdtemp(join(oc.root, "state-"));
  consoleProc = await startConsoleCli({ OPENCODE_PASSWORD: oc.password, OPENCODE_CONDUCTOR_STATE_DIR: stateDir, OPENCODE_CONDUCTOR_HTTP_TOKEN: HTTP_TOKEN });
  const signedIn = await fetch(consoleProc.url, { redirect: "manual" });
  const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!;
  // Our own reader of the live stream for the whole run (a browser cannot hand a stream's body over).
  void fetch(`${consoleProc.origin}/api/events`, { headers: { cookie }, signal: stopStream.signal })
    .then(async (res) => {
      const reader = res.body!.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) streamed += Buffer.from(read.value).toString();
    })
    .catch(() => undefined);
  mcp = await startMcp({
    OPENCODE_URL: oc.url,
    OPENCODE_PASSWORD: oc.password,
    OPENCODE_CONDUCTOR_DIRECTORY: oc.directory,
    OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
    OPENCODE_CONDUCTOR_HTTP_TOKEN: HTTP_TOKEN,
    OPENCODE_CONDUCTOR_APPROVALS: "return",
  });
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  responses = recordResponses(page);
  await page.goto(consoleProc.url);
}, 180_000);

// A test that failed must not leave its script to the next one.
beforeEach(() => oc.model.clear());

afterAll(async () => {
  stopStream.abort();
  await mcp?.close().catch(() => undefined);
  await browser?.close();
  await consoleProc?.stop();
  await oc?.stop();
});

describe("console on opencode 2.x (browser)", () => {
  it("a shell permission: the row and the approval appear, Allow once is clicked, the answer streams in, the task ends done as the server recorded", async () => {
    oc.model.queue(toolCall("shell", { command: "echo approved > approved.txt" }), text(ANSWER, { chunks: PIECES, chunkDelayMs: 1_500 }));
    const started = await mcp.call("oc_delegate", { task: "Run the approved command", title: "v2 approval task" });
    expect(started.isError, started.text).toBe(false);
    expect(started.data.status).toBe("blocked");
    const id = started.data.session_id as string;
    const [request] = started.data.pending as Array<{ id: string; permission: string }>;
    expect(request).toMatchObject({ id: expect.stringMatching(/^per_/), permission: "shell" });

    // The row, blocked, and the approval with its command, as the 2.x server lists it.
    await expect.poll(() => row(id).getAttribute("data-status"), { timeout: 60_000 }).toBe("blocked");
    const approval = page.locator(`[data-testid=pending][data-request="${request!.id}"]`);
    await approval.waitFor({ timeout: 30_000 });
    expect(await approval.textContent()).toContain("echo approved > approved.txt");
    expect(await approval.textContent()).toContain("shell");
    expect(await v2.request("permission.list", { path: { sessionID: id } })).toMatchObject({ data: [{ id: request!.id }] });

    // On the task page: the prompt is there already; the approval is answered there with a click.
    await page.goto(`${consoleProc.origin}/#/task/${id}`);
    const transcript = page.getByTestId("transcript");
    await expect.poll(() => transcript.textContent(), { timeout: 30_000 }).toContain("Run the approved command");
    await page.locator(`[data-testid=pending][data-request="${request!.id}"]`).getByRole("button", { name: "Allow once" }).click();

    // Live progress: the shell call completes, then the answer grows piece by piece while the task still runs.
    const first = ANSWER.slice(0, Math.ceil(ANSWER.length / PIECES));
    await expect.poll(async () => (await pageTranscript()).some((line) => line.startsWith("tool shell: completed")), { timeout: 60_000 }).toBe(true);
    await expect
      .poll(
        async () => {
          const shown = (await transcript.textContent()) ?? "";
          return shown.includes(first) && !shown.includes(ANSWER) ? "partial" : shown.includes(ANSWER) ? "whole already" : "none yet";
        },
        { timeout: 60_000, interval: 100 },
      )
      .toBe("partial");
    expect(await page.locator("h2 .badge").getAttribute("data-status")).toBe("running");

    // The end: done, as the core's result() reads it from the server.
    await expect.poll(() => page.locator("h2 .badge").getAttribute("data-status"), { timeout: 60_000 }).toBe("done");
    await expect.poll(() => transcript.textContent(), { timeout: 30_000 }).toContain(ANSWER);
    expect(await readFile(join(oc.directory, "approved.txt"), "utf8")).toBe("approved\n");

    // The session re-read from the 2.x server agrees with the page, line for line.
    const messages = await recorded(id);
    expect(messages.filter((m) => m.type === "assistant").at(-1)).toMatchObject({ finish: "stop" });
    expect(recordedTranscript(messages)).toEqual(["task: Run the approved command", "tool shell: completed", `agent: ${ANSWER}`]);
    await expect.poll(pageTranscript, { timeout: 30_000 }).toEqual(recordedTranscript(messages));
    // And so does the tool a caller would ask.
    const result = await mcp.call("oc_result", { session_id: id });
    expect(result.data).toMatchObject({ status: "done", answer: ANSWER });

    // The live stream carried the answer as deltas of the part the page later read whole.
    const parts = streamed.split("\n\n").filter((block) => block.startsWith("event: part\n") && block.includes(id));
    expect(parts.some((block) => block.includes('"delta"') && block.includes(JSON.stringify(first).slice(1, -1)))).toBe(true);

    await page.goto(`${consoleProc.origin}/#/`);
    await expect.poll(() => row(id).getAttribute("data-status"), { timeout: 30_000 }).toBe("done");
    await page.getByTestId("pending").waitFor({ state: "detached" });

    await page.goto(`${consoleProc.origin}/#/audit`);
    const audited = page.locator('[data-testid=audit-row][data-by="human (console)"]');
    await audited.waitFor({ timeout: 30_000 });
    expect(await audited.textContent()).toContain(id);
    expect(await audited.textContent()).toContain("once");

    // The server row: healthy, 2.x's own version (as it says on its info route), the v2 API.
    await page.goto(`${consoleProc.origin}/#/servers`);
    const server = page.getByTestId("server-row");
    await server.waitFor();
    // What the server said it is when the test's own client connected (its info route).
    const version = v2.identity.version;
    expect(version).toMatch(/^2\./);
    expect(await server.textContent()).toContain(version);
    expect(await server.textContent()).toContain("healthy");
    expect(await server.getByTestId("server-engine").textContent()).toBe("v2 API");
  });

  it("a question (a 2.x form) answered in the page: the task goes on to done with the choice the server recorded", async () => {
    const question = COLOUR_QUESTION;
    oc.model.queue(toolCall("question", { questions: [question] }), text("Blue it is."));
    const started = await mcp.call("oc_delegate", { task: "Ask me for a colour", title: "v2 question task" });
    expect(started.data.status).toBe("blocked");
    const id = started.data.session_id as string;
    const [form] = started.data.pending as Array<{ id: string }>;
    expect(form!.id).toMatch(/^frm_/);

    await page.goto(`${consoleProc.origin}/#/`);
    const asked = page.locator(`[data-testid=pending][data-request="${form!.id}"]`);
    await asked.waitFor({ timeout: 60_000 });
    expect(await asked.textContent()).toContain("Which colour?");
    await asked.getByLabel("blue").check();
    await asked.getByRole("button", { name: "Answer" }).click();

    await expect.poll(() => row(id).getAttribute("data-status"), { timeout: 60_000 }).toBe("done");
    const tool = (await recorded(id)).flatMap((m) => m.content ?? []).find((c) => c.type === "tool" && c.name === "question");
    expect(tool).toMatchObject({ state: { status: "completed", metadata: { answers: [["blue"]] } } });
    expect((await mcp.call("oc_result", { session_id: id })).data).toMatchObject({ status: "done", answer: "Blue it is." });
  });

  it("no secret in any response the page got, nor in the live stream", async () => {
    const secrets = [oc.password, HTTP_TOKEN, new URL(consoleProc.url).searchParams.get("token") ?? ""].filter((s) => s.length >= 8);
    expect(secrets.length).toBe(3);
    // The stream saw the whole run: snapshot, tasks, requests, parts.
    expect(streamed).toContain("event: snapshot");
    expect(streamed).toContain("event: part");
    expect(responses.length).toBeGreaterThan(10);
    for (const secret of secrets) {
      expect(streamed.includes(secret)).toBe(false);
      for (const r of responses) expect(r.body.includes(secret), r.url).toBe(false);
    }
  });
});
