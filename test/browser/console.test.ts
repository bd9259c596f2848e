// The web console in a real headless Chromium (Debian's, through playwright-core) against a real
// opencode with the scripted model and the real MCP server: a 3-task batch whose third task asks
// for bash, answered by a click; two MCP server processes seen at once; forged requests refused;
// no secret in anything the console sent; agent-written HTML inert. Screenshots of each view go to
// OCC_SCREENSHOT_DIR (default .tmp/console-screenshots; docs/console/ holds the committed ones).
import { mkdir, mkdtemp, readFile } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../src/client/connect.js";
import { isProcessAlive } from "../../src/client/discovery/processes.js";
import { CLI, startMcp, type McpSession } from "../support/mcp-client.js";
import { makeProjectDir, offlineConfig, startOpencode, xdg, type TestOpencode } from "../support/opencode.js";
import { text, toolCall } from "../support/scripted-model.js";
import { launchBrowser, recordResponses, startConsoleCli, type ConsoleProcess, type Recorded } from "./support.js";
import { COLOR_QUESTION } from "../support/questions.js";

const PROVIDER_KEY = "sk-console-test-provider-key-0123456789";
const HTTP_TOKEN = "console-test-http-token-9876543210";
const SHOTS = resolve(process.env.OCC_SCREENSHOT_DIR ?? ".tmp/console-screenshots");
const INERT = `Done. <script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> end`;

let oc: TestOpencode;
let stateDir: string;
let consoleProc: ConsoleProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let responses: Recorded[];
let streamed = "";
const stopStream = new AbortController();
const mcps: McpSession[] = [];
/** Private instances' passwords (from the registry), which must not reach the browser either. */
const instancePasswords: string[] = [];

/** An MCP client that can show forms (as Claude Code does) but whose user never answers one there. */
async function mcpServer(env: Record<string, string> = {}): Promise<McpSession> {
  const session = await startMcp(
    {
      OPENCODE_URL: oc.url,
      OPENCODE_PASSWORD: oc.password,
      OPENCODE_CONDUCTOR_DIRECTORY: oc.directory,
      OPENCODE_CONDUCTOR_STATE_DIR: stateDir,
      OPENCODE_CONDUCTOR_HTTP_TOKEN: HTTP_TOKEN,
      ...env,
    },
    { elicitation: { form: {} } },
  );
  session.client.setRequestHandler(
    "elicitation/create",
    (_request, ctx) =>
      new Promise((_resolve, reject) => ctx.mcpReq.signal.addEventListener("abort", () => reject(new Error("form closed: answered elsewhere")))),
  );
  mcps.push(session);
  return session;
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** The session's cookie, got the way a browser gets it: the printed URL's token, once. */
async function signIn(): Promise<string> {
  const res = await fetch(consoleProc.url, { redirect: "manual" });
  expect(res.status).toBe(303);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  browser = await launchBrowser();
  oc = await startOpencode({
    gitInit: true,
    permission: { bash: "ask" },
    config: { provider: { fake: { options: { apiKey: PROVIDER_KEY }, models: { third: { name: "Third" } } } } },
  });
  stateDir = await mkdtemp(join(oc.root, "state-"));
  consoleProc = await startConsoleCli({ OPENCODE_PASSWORD: oc.password, OPENCODE_CONDUCTOR_STATE_DIR: stateDir, OPENCODE_CONDUCTOR_HTTP_TOKEN: HTTP_TOKEN });
  // Our own reader of the live stream, kept for the whole run: a browser cannot hand a stream's body over.
  const cookie = await signIn();
  void fetch(`${consoleProc.origin}/api/events`, { headers: { cookie }, signal: stopStream.signal })
    .then(async (res) => {
      const reader = res.body!.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) streamed += Buffer.from(read.value).toString();
    })
    .catch(() => undefined);
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  responses = recordResponses(page);
  await page.goto(consoleProc.url);
}, 120_000);

afterAll(async () => {
  stopStream.abort();
  await Promise.all(mcps.map((m) => m.close().catch(() => undefined)));
  await browser?.close();
  await consoleProc?.stop();
  await oc?.stop();
});

describe("console (browser)", () => {
  it("a 3-task batch: three rows and bars, the bash approval answered by a click, the waiting MCP call done with the file and its diff, and the audit row", async () => {
    const mcp = await mcpServer();
    const target = join(oc.directory, "notes.txt");
    oc.model.for("scripted").queue(text(INERT, { delayMs: 300 }));
    oc.model.for("backup").queue(text("Second task done.", { delayMs: 300 }));
    oc.model
      .for("third")
      .queue(
        toolCall("bash", { command: "echo checked", description: "check the shell" }),
        toolCall("write", { filePath: target, content: "written after approval\n" }),
        text("Wrote notes.txt after the approval."),
      );
    const batch = mcp.call(
      "oc_delegate_parallel",
      {
        tasks: [
          { task: "Say something with markup", title: "markup task", model: "fake/scripted" },
          { task: "Second task", title: "second task", model: "fake/backup" },
          { task: "Run a check, then write notes.txt", title: "approval task", model: "fake/third", permissions: "agent" },
        ],
        max_tokens: 1_000_000,
      },
      { timeoutMs: 180_000 },
    );

    await expect.poll(() => page.getByTestId("task-row").count(), { timeout: 60_000 }).toBe(3);
    const approval = page.getByTestId("pending");
    await approval.waitFor({ timeout: 60_000 });
    await expect.poll(() => approval.textContent()).toContain("echo checked");
    const bars = () =>
      page.evaluate(() => {
        const chart = (
          window as unknown as { Chart: { getChart(c: Element): { data: { datasets: Array<{ type: string; data: Array<{ y: string }> }> } } } }
        ).Chart.getChart(document.querySelector("[data-testid=timeline]")!);
        return new Set(chart.data.datasets.filter((d) => d.type === "bar").flatMap((d) => d.data.map((x) => x.y))).size;
      });
    await expect.poll(bars, { timeout: 10_000 }).toBe(3);
    await shot("overview-approval");

    await approval.getByRole("button", { name: "Allow once" }).click();
    const result = await batch;
    expect(result.isError).toBe(false);
    const results = result.data.results as Array<{ status: string; session_id: string; files?: Array<{ path: string }> }>;
    expect(results.map((r) => r.status)).toEqual(["done", "done", "done"]);
    const third = results[2]!;
    expect(third.files?.map((f) => f.path)).toEqual(["notes.txt"]);
    expect(await readFile(target, "utf8")).toBe("written after approval\n");

    // What opencode recorded agrees: the bash call ran (approved), the write happened, the turn ended with a stop.
    const client = connect({ url: oc.url, password: oc.password, directory: oc.directory });
    const messages = await client.call("session.messages", { path: { sessionID: third.session_id } });
    const tools = messages.flatMap((m) => m.parts).flatMap((p) => (p.type === "tool" ? [`${p.tool}:${p.state.status}`] : []));
    expect(tools).toEqual(["bash:completed", "write:completed"]);
    const last = messages.at(-1)!.info;
    expect(last.role === "assistant" && last.finish).toBe("stop");

    await expect
      .poll(() => page.locator(`[data-testid=task-row][data-session="${third.session_id}"]`).getAttribute("data-status"), { timeout: 30_000 })
      .toBe("done");
    await expect.poll(() => page.locator("[data-testid=task-row][data-status=done]").count()).toBe(3);
    await page.getByTestId("pending").waitFor({ state: "detached" });

    await page.locator(`[data-testid=task-row][data-session="${third.session_id}"] a`).click();
    const diff = page.locator('[data-testid=diff][data-file="notes.txt"]');
    await diff.waitFor({ timeout: 30_000 });
    expect(await diff.textContent()).toContain("+written after approval");
    await expect.poll(() => page.getByTestId("transcript").textContent()).toContain("Wrote notes.txt after the approval.");
    await shot("task-diff");

    await page.goto(`${consoleProc.origin}/#/audit`);
    const row = page.locator('[data-testid=audit-row][data-by="human (console)"]');
    await row.waitFor({ timeout: 30_000 });
    expect(await row.textContent()).toContain(third.session_id);
    expect(await row.textContent()).toContain("once");
    await page.locator("[data-testid=audit-row][data-tool=oc_delegate_parallel]").waitFor();
    await shot("audit");

    await page.goto(`${consoleProc.origin}/#/timeline`);
    await page.getByTestId("models-chart").waitFor();
    await shot("timeline");
    await page.goto(`${consoleProc.origin}/#/servers`);
    await page.getByTestId("server-row").waitFor();
    expect(await page.getByTestId("server-row").textContent()).toContain("1.18.33");
    await shot("servers");
    // A phone-width window: the same page, one column.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${consoleProc.origin}/#/`);
    await page.getByTestId("task-row").first().waitFor();
    await shot("overview-phone");
    await page.setViewportSize({ width: 1280, height: 800 });

    // Agent-written markup stays text: shown literally, never run.
    const markup = results[0]!;
    await page.goto(`${consoleProc.origin}/#/task/${markup.session_id}`);
    await expect.poll(() => page.getByTestId("transcript").textContent(), { timeout: 30_000 }).toContain("<script>window.__pwned = 1</script>");
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator("[data-testid=transcript] script, [data-testid=transcript] img").count()).toBe(0);
  });

  it("a question answered in the console by keyboard: the waiting oc_delegate goes on with the choice", async () => {
    const mcp = await mcpServer();
    const questions = [COLOR_QUESTION];
    oc.model.for("backup").queue(toolCall("question", { questions }), text("Blue it is."));
    await page.goto(`${consoleProc.origin}/#/approvals`);
    const call = mcp.call("oc_delegate", { task: "Pick a color", title: "question task", model: "fake/backup" }, { timeoutMs: 120_000 });
    const card = page.locator("[data-testid=pending]", { hasText: "Which color?" });
    await card.waitFor({ timeout: 60_000 });
    // By keyboard only: the page is operable without a mouse.
    await card.getByLabel("Blue").focus();
    await page.keyboard.press("Space");
    await card.getByRole("button", { name: "Answer" }).focus();
    await page.keyboard.press("Enter");
    const result = await call;
    expect(result.data).toMatchObject({ status: "done", answer: "Blue it is." });
    // opencode recorded the choice as the question tool's result.
    const client = connect({ url: oc.url, password: oc.password, directory: oc.directory });
    const messages = await client.call("session.messages", { path: { sessionID: result.data.session_id as string } });
    const tool = messages.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.tool === "question");
    expect(tool?.type === "tool" && tool.state.status === "completed" && tool.state.output).toContain('"Which color?"="Blue"');
    await page.goto(`${consoleProc.origin}/#/audit`);
    await page.locator('[data-testid=audit-row][data-by="human (console)"]', { hasText: "answered" }).waitFor({ timeout: 30_000 });
  });

  it("shows the tasks of two MCP server processes at once", async () => {
    const [one, two] = [await mcpServer(), await mcpServer()];
    // Each says how to open the console: in its startup log line and in oc_status.
    let log = "";
    one.transport.stderr!.on("data", (c: Buffer) => (log += c.toString()));
    // This installation's own command (a clone: node and its dist/cli.js), which runs as printed.
    const command = `OPENCODE_CONDUCTOR_STATE_DIR=${JSON.stringify(stateDir)} node ${CLI} console --open`;
    await expect.poll(() => log).toContain(`watch its work in a browser: ${command}`);
    const status = await one.call("oc_status");
    expect(status.text).toContain(`Web console (tasks, approvals, timeline, audit): ${command}`);
    expect(status.data.console).toBe(command);
    oc.model.for("scripted").queue(text("first server's answer", { delayMs: 4_000 }));
    oc.model.for("backup").queue(text("second server's answer", { delayMs: 4_000 }));
    await page.goto(`${consoleProc.origin}/#/`);
    const calls = [
      one.call("oc_delegate", { task: "from the first MCP server", title: "first server", model: "fake/scripted" }),
      two.call("oc_delegate", { task: "from the second MCP server", title: "second server", model: "fake/backup" }),
    ];
    const running = page.locator("[data-testid=task-row][data-status=running]");
    await expect.poll(() => running.count(), { timeout: 60_000 }).toBe(2);
    const pids = await running.evaluateAll((rows) => rows.map((r) => r.textContent?.match(/pid (\d+)/)?.[1]));
    expect(new Set(pids).size).toBe(2);
    await shot("two-servers");
    const done = await Promise.all(calls);
    expect(done.map((d) => d.data.status)).toEqual(["done", "done"]);
    for (const d of done)
      await expect
        .poll(() => page.locator(`[data-testid=task-row][data-session="${d.data.session_id as string}"]`).getAttribute("data-status"), { timeout: 30_000 })
        .toBe("done");
  });

  it("a task on a private instance: its row names the instance, the Servers view lists it and stops it once idle", async () => {
    const mcp = await mcpServer({
      // What the private instance inherits: the harness's home and the scripted provider, offline.
      ...xdg(oc.home),
      OPENCODE_CONFIG_CONTENT: JSON.stringify(offlineConfig(oc.model.baseURL)),
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      npm_config_registry: "http://127.0.0.1:9/",
    });
    const project = await makeProjectDir(oc, "isolated", { gitInit: true });
    oc.model.for("scripted").queue(text("Done on a private instance."));
    const r = await mcp.call(
      "oc_delegate",
      { task: "Work in isolation", title: "isolated task", directory: project, isolation: "instance", model: "fake/scripted" },
      { timeoutMs: 240_000 },
    );
    expect(r.data.status, r.text).toBe("done");
    const rows = (JSON.parse(await readFile(join(stateDir, "instances.json"), "utf8")) as { instances: Array<{ pid: number; url: string; password: string }> })
      .instances;
    expect(rows).toHaveLength(1);
    instancePasswords.push(rows[0]!.password);
    await page.goto(`${consoleProc.origin}/#/`);
    const row = page.locator(`[data-testid=task-row][data-session="${r.data.session_id as string}"]`);
    await expect.poll(() => row.getAttribute("data-status"), { timeout: 30_000 }).toBe("done");
    await row.locator("a").click();
    await expect.poll(() => page.locator(".facts").textContent()).toContain(rows[0]!.url);
    await page.goto(`${consoleProc.origin}/#/servers`);
    const instance = page.locator("[data-testid=server-row]", { hasText: `pid ${rows[0]!.pid}` });
    await instance.waitFor({ timeout: 30_000 });
    await instance.getByRole("button", { name: "Stop" }).click();
    // Stopped and out of the registry: the row no longer shows the instance.
    await instance.waitFor({ state: "detached", timeout: 30_000 });
    // Gone (or a zombie its MCP server has not reaped yet).
    expect(isProcessAlive(rows[0]!.pid)).toBe(false);
    expect((JSON.parse(await readFile(join(stateDir, "instances.json"), "utf8")) as { instances: unknown[] }).instances).toEqual([]);
    await page.goto(`${consoleProc.origin}/#/audit`);
    await page.locator("[data-testid=audit-row][data-tool=console]", { hasText: "stop" }).waitFor({ timeout: 30_000 });
  });

  it("refuses forged requests: no cookie, no or a foreign Origin, a foreign Host, a cross-origin page", async () => {
    const answer = `${consoleProc.origin}/api/answer`;
    const body = JSON.stringify({ id: "per_x", decision: "once" });
    expect((await fetch(answer, { method: "POST", body, headers: { origin: consoleProc.origin } })).status).toBe(401);
    const cookie = await signIn();
    expect((await fetch(answer, { method: "POST", body, headers: { cookie } })).status).toBe(403);
    expect((await fetch(answer, { method: "POST", body, headers: { cookie, origin: "http://evil.example" } })).status).toBe(403);
    // fetch() will not send another Host: a DNS-rebound name, by hand.
    const rebound = await new Promise<number>((done, fail) => {
      const port = Number(new URL(consoleProc.origin).port);
      request(
        { host: "127.0.0.1", port, path: "/api/servers", headers: { cookie, host: `evil.example:${port}` } },
        (res) => (res.resume(), done(res.statusCode!)),
      )
        .on("error", fail)
        .end();
    });
    expect(rebound).toBe(421);
    expect((await fetch(`${consoleProc.url.replace(/token=[^&]+/, "token=wrong")}`, { redirect: "manual" })).status).toBe(403);
    expect((await fetch(`${consoleProc.origin}/api/servers`)).status).toBe(401);

    // A page of another local port is the same site, so the browser does send the cookie: the Origin check is what stops it.
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        `<form id=f method=POST action="${answer}" enctype="text/plain"><input name='{"id":"per_x","decision":"once","x":"' value='"}'></form><script>document.getElementById("f").submit()</script>`,
      );
    });
    await new Promise<void>((r) => evil.listen(0, "127.0.0.1", r));
    try {
      const refused = page.waitForResponse((r) => r.url() === answer);
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const response = await refused;
      expect(response.status()).toBe(403);
      expect(await response.text()).toContain("is not this console's");
    } finally {
      await new Promise<void>((r) => evil.close(() => r()));
    }
  });

  it("no secret in any response the console sent during the run", async () => {
    await expect.poll(() => streamed.length).toBeGreaterThan(0);
    const everything = [...responses.map((r) => `${r.url}\n${r.body}`), streamed].join("\n");
    expect(responses.length).toBeGreaterThan(10);
    expect(instancePasswords).toHaveLength(1);
    for (const secret of [oc.password, PROVIDER_KEY, HTTP_TOKEN, ...instancePasswords]) expect(everything).not.toContain(secret);
    // The sign-in token only ever travels in the URL the user opened, never back in a body.
    const token = new URL(consoleProc.url).searchParams.get("token")!;
    expect([...responses.map((r) => r.body), streamed].join("\n")).not.toContain(token);
  });
});
