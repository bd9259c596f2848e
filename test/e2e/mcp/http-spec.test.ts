// Streamable HTTP as the MCP 2025-11-25 transport spec asks, driven with raw HTTP so every header
// and SSE field is the test's: a foreign Origin gets 403 (loopback and configured origins pass), a
// 2 MB body before initialize gets a clean 413, and a client whose tools/call stream drops during a
// delegation reconnects with Last-Event-ID and receives the progress it missed and the result; the
// outcome is compared with the session as opencode recorded it.
import { existsSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/connect.js";
import { startHttpCli, type HttpCli } from "../../support/http-cli.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { text, toolCall } from "../../support/scripted-model.js";
import { readMessages } from "../../support/turns.js";

const TOKEN = "spec-test-token-0123456789abcdef";
const ALLOWED = "https://app.example";
const PROTOCOL = "2025-11-25";

let opencode: TestOpencode;
let cli: HttpCli;

beforeAll(async () => {
  opencode = await startOpencode();
  cli = await startHttpCli(["--port", "0"], {
    OPENCODE_URL: opencode.url,
    OPENCODE_PASSWORD: opencode.password,
    OPENCODE_CONDUCTOR_DIRECTORY: opencode.directory,
    OPENCODE_CONDUCTOR_STATE_DIR: join(opencode.root, "state"),
    OPENCODE_CONDUCTOR_HTTP_TOKEN: TOKEN,
    OPENCODE_CONDUCTOR_HTTP_ORIGINS: `${ALLOWED},`,
  });
});
afterAll(async () => {
  if (cli && cli.child.exitCode === null && cli.child.signalCode === null) {
    cli.child.kill("SIGTERM");
    await cli.exit;
  }
  await opencode?.stop();
});

const headers = (extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${TOKEN}`,
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  ...extra,
});
const initialize = (id = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "raw-spec", version: "1" } },
});

type Event = EventSourceMessage & { json?: { id?: number; method?: string; result?: Record<string, unknown>; params?: Record<string, unknown> } };

/** Reads SSE events from a response until `until` says stop (or the stream ends); the reader is then cancelled. */
async function readEvents(res: Response, until: (e: Event, all: Event[]) => boolean): Promise<Event[]> {
  const events: Event[] = [];
  let done = false;
  const parser = createParser({
    onEvent(e) {
      const event: Event = { ...e, ...(e.data.trim() ? { json: JSON.parse(e.data) } : {}) };
      events.push(event);
      if (until(event, events)) done = true;
    },
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  while (!done) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
  await reader.cancel().catch(() => undefined);
  return events;
}

async function openSession(): Promise<string> {
  const res = await fetch(cli.url, { method: "POST", headers: headers(), body: JSON.stringify(initialize()) });
  expect(res.status).toBe(200);
  const sessionId = res.headers.get("mcp-session-id")!;
  const events = await readEvents(res, (e) => e.json?.id === 1);
  // The priming event: an id and an empty data line, with the reconnection delay.
  expect(events[0]).toMatchObject({ data: "" });
  expect(events[0]!.id).toBeTruthy();
  const initialized = await fetch(cli.url, {
    method: "POST",
    headers: headers({ "mcp-session-id": sessionId, "mcp-protocol-version": PROTOCOL }),
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  expect(initialized.status).toBe(202);
  return sessionId;
}

function rawPost(body: Buffer | string, extra: Record<string, string>): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port: cli.port, path: "/mcp", method: "POST", headers: headers(extra) }, (res) => {
      let t = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (t += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: t }));
    });
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end(body);
  });
}

describe("Streamable HTTP, 2025-11-25", () => {
  it("answers 403 to a foreign Origin, and lets loopback and configured origins through", async () => {
    const foreign = await rawPost(JSON.stringify(initialize()), { origin: "http://evil.example" });
    expect(foreign).toMatchObject({ status: 403 });
    expect((foreign as { body: string }).body).toContain("OPENCODE_CONDUCTOR_HTTP_ORIGINS");
    for (const origin of ["null", "http://127.0.0.1.evil.example", "https://app.example.evil"])
      expect(await rawPost(JSON.stringify(initialize()), { origin })).toMatchObject({ status: 403 });
    for (const origin of [`http://localhost:${cli.port}`, "http://127.0.0.1:3000", ALLOWED]) {
      expect(await rawPost(JSON.stringify(initialize()), { origin }), origin).toMatchObject({ status: 200 });
    }
  });

  it("closes a 2 MB body before initialize with a 413, and keeps serving", async () => {
    const big = await rawPost(JSON.stringify({ ...initialize(), pad: "x".repeat(2 * 1024 * 1024) }), {});
    expect(big).toMatchObject({ status: 413 });
    expect((big as { body: string }).body).toContain("too large");
    expect(await rawPost(JSON.stringify(initialize()), {})).toMatchObject({ status: 200 });
  });

  it("a client whose stream drops mid-delegation reconnects with Last-Event-ID and gets the missed progress and the result", async () => {
    const first = join(opencode.directory, "resume-first.txt");
    const second = join(opencode.directory, "resume-second.txt");
    opencode.model.queue(
      toolCall("write", { filePath: first, content: "one" }),
      toolCall("write", { filePath: second, content: "two" }, { delayMs: 500 }),
      text("Both files written.", { delayMs: 1_500 }),
    );
    const sessionId = await openSession();
    const call = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "oc_delegate", arguments: { task: "Write both files", permissions: "auto" }, _meta: { progressToken: "p7" } },
    };
    const drop = new AbortController();
    const res = await fetch(cli.url, {
      method: "POST",
      headers: headers({ "mcp-session-id": sessionId, "mcp-protocol-version": PROTOCOL }),
      body: JSON.stringify(call),
      signal: drop.signal,
    });
    expect(res.status).toBe(200);
    // Read up to the first progress notification, then drop the connection.
    const before = await readEvents(res, (e) => e.json?.method === "notifications/progress");
    const lastSeen = before.at(-1)!;
    expect(lastSeen.id).toBeTruthy();
    drop.abort();

    // While nobody listens, the agent writes the second file (its model is asked a third time).
    await opencode.model.waitForRequests(3, { kind: "chat", timeoutMs: 60_000 });

    const resumed = await fetch(cli.url, {
      method: "GET",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        accept: "text/event-stream",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": PROTOCOL,
        "last-event-id": lastSeen.id!,
      },
    });
    expect(resumed.status).toBe(200);
    const after = await readEvents(resumed, (e) => e.json?.id === 7);
    const missed = after.filter((e) => e.json?.method === "notifications/progress");
    expect(missed.length, JSON.stringify(after.map((e) => e.json))).toBeGreaterThan(0);
    expect(missed.every((e) => e.json!.params!.progressToken === "p7")).toBe(true);
    expect(new Set([...before, ...after].map((e) => e.id)).size).toBe(before.length + after.length); // nothing delivered twice
    const result = after.at(-1)!.json!.result as { structuredContent: { status: string; session_id: string; answer: string } };
    expect(result.structuredContent).toMatchObject({ status: "done", answer: "Both files written." });

    // opencode recorded the same: both writes completed in that session.
    const oc = connect({ url: opencode.url, password: opencode.password, directory: opencode.directory });
    const writes = (await readMessages(oc, result.structuredContent.session_id)).flatMap((m) => m.parts).filter((p) => p.type === "tool" && p.tool === "write");
    expect(writes.map((p) => p.type === "tool" && p.state.status)).toEqual(["completed", "completed"]);
    expect(existsSync(first) && existsSync(second)).toBe(true);
  });
});
