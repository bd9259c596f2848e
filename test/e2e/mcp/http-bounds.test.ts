// Streamable HTTP stays bounded (issue 24 item 4), against the real CLI `--http` and real opencode:
// 1,000 initializes meet the session cap (a 503 that says what to do) and RSS stays under a stated
// bound; 209 quick calls, each dropped after its priming event and replayed with Last-Event-ID, give
// 209 answers; 60 large answers leave the session's event store under its size; a slow body is cut
// at the request timeout; an idle session is closed; no descriptor is left on the trails.
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { connect as tcp } from "node:net";
import { join } from "node:path";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpCli, type HttpCli } from "../../support/http-cli.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";

const TOKEN = "bounds-test-token-0123456789abcdef";
const PROTOCOL = "2025-11-25";
/** The CLI's defaults: OPENCODE_CONDUCTOR_HTTP_MAX_SESSIONS. */
const MAX_SESSIONS = 100;
/** OPENCODE_CONDUCTOR_HTTP_EVENTS_MB=1 for the 60-answer session (tool answers are cut to tens of KB). */
const STORE_BYTES = 1024 * 1024;

let opencode: TestOpencode;
const started: HttpCli[] = [];

beforeAll(async () => {
  opencode = await startOpencode();
});
afterAll(async () => {
  for (const cli of started) {
    if (cli.child.exitCode === null && cli.child.signalCode === null) {
      cli.child.kill("SIGTERM");
      await cli.exit;
    }
  }
  await opencode?.stop();
});

async function start(env: Record<string, string> = {}): Promise<HttpCli> {
  const cli = await startHttpCli(["--port", "0"], {
    OPENCODE_URL: opencode.url,
    OPENCODE_PASSWORD: opencode.password,
    OPENCODE_CONDUCTOR_DIRECTORY: opencode.directory,
    OPENCODE_CONDUCTOR_STATE_DIR: join(opencode.root, `state-${started.length}`),
    OPENCODE_CONDUCTOR_HTTP_TOKEN: TOKEN,
    ...env,
  });
  started.push(cli);
  return cli;
}

const headers = (extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${TOKEN}`,
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  ...extra,
});
const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "bounds", version: "1" } },
};

type Event = EventSourceMessage & { json?: { id?: number; result?: Record<string, unknown>; error?: unknown } };

/** SSE events of a response until `until` says stop (or the stream ends); the reader is then cancelled. */
async function readEvents(res: Response, until: (e: Event) => boolean = () => false): Promise<Event[]> {
  const events: Event[] = [];
  let done = false;
  const parser = createParser({
    onEvent(e) {
      const event: Event = { ...e, ...(e.data.trim() ? { json: JSON.parse(e.data) } : {}) };
      events.push(event);
      if (until(event)) done = true;
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

async function openSession(cli: HttpCli): Promise<string> {
  const res = await fetch(cli.url, { method: "POST", headers: headers(), body: JSON.stringify(initialize) });
  expect(res.status).toBe(200);
  await readEvents(res, (e) => e.json?.id === 1);
  const sessionId = res.headers.get("mcp-session-id")!;
  const initialized = await fetch(cli.url, {
    method: "POST",
    headers: headers({ "mcp-session-id": sessionId, "mcp-protocol-version": PROTOCOL }),
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  expect(initialized.status).toBe(202);
  return sessionId;
}

const inSession = (sessionId: string) => headers({ "mcp-session-id": sessionId, "mcp-protocol-version": PROTOCOL });

/** GET with Last-Event-ID; a 409 (the dropped stream not yet seen closed by the server) is asked again. */
async function replay(cli: HttpCli, sessionId: string, lastEventId: string): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(cli.url, { method: "GET", headers: { ...inSession(sessionId), accept: "text/event-stream", "last-event-id": lastEventId } });
    if (res.status !== 409 || attempt === 50) return res;
    await res.body?.cancel();
    await new Promise((r) => setImmediate(r));
  }
}

function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]!;
  return Number(kb) / 1024;
}

function descriptorsOn(pid: number, path: string): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
    } catch {
      return false; // closed meanwhile
    }
  }).length;
}

describe("Streamable HTTP bounds", () => {
  it("1,000 initializes: 100 sessions, the rest a 503 saying what to do; RSS under 400 MB", { timeout: 600_000 }, async () => {
    const cli = await start();
    const before = rssMb(cli.child.pid!);
    const statuses: number[] = [];
    let refusal = "";
    let retryAfter: string | null = null;
    // Ten at a time, as a misbehaving client would send them.
    for (let i = 0; i < 1_000; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          const res = await fetch(cli.url, { method: "POST", headers: headers(), body: JSON.stringify(initialize) });
          statuses.push(res.status);
          if (res.status === 503) {
            refusal = await res.text();
            retryAfter = res.headers.get("retry-after");
          } else await readEvents(res, (e) => e.json?.id === 1);
        }),
      );
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(MAX_SESSIONS);
    expect(statuses.filter((s) => s === 503)).toHaveLength(1_000 - MAX_SESSIONS);
    expect(JSON.parse(refusal).error.message).toMatch(/Too many MCP sessions: 100 are open.*DELETE \/mcp.*OPENCODE_CONDUCTOR_HTTP_MAX_SESSIONS/);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    const after = rssMb(cli.child.pid!);
    expect(after, `RSS ${before.toFixed(0)} MB before, ${after.toFixed(0)} MB after`).toBeLessThan(400);
  });

  it(
    "209 quick calls, each dropped after its priming event and replayed with Last-Event-ID: 209 answers; no descriptor left on the trails",
    { timeout: 600_000 },
    async () => {
      const cli = await start();
      const sessionId = await openSession(cli);
      let answered = 0;
      for (let id = 100; id < 309; id++) {
        const drop = new AbortController();
        const res = await fetch(cli.url, {
          method: "POST",
          headers: inSession(sessionId),
          body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "oc_status", arguments: {} } }),
          signal: drop.signal,
        });
        expect(res.status).toBe(200);
        const [priming] = await readEvents(res, () => true);
        drop.abort();
        expect(priming!.data).toBe("");
        const resumed = await replay(cli, sessionId, priming!.id!);
        expect(resumed.status).toBe(200);
        const events = await readEvents(resumed, (e) => e.json?.id === id);
        if (events.some((e) => e.json?.id === id && e.json.result)) answered++;
      }
      expect(answered).toBe(209);
      // oc_status checked the trails 209 times through the process's one writer per file, which opens it only to write.
      const state = join(opencode.root, `state-${started.length - 1}`);
      expect(descriptorsOn(cli.child.pid!, join(state, "audit.jsonl")) + descriptorsOn(cli.child.pid!, join(state, "tasks.jsonl"))).toBe(0);
    },
  );

  it("60 large answers in one session: its event store keeps under its 1 MiB plus the newest answer, which still replays", { timeout: 600_000 }, async () => {
    const cli = await start({ OPENCODE_CONDUCTOR_HTTP_EVENTS_MB: "1" });
    writeFileSync(join(opencode.directory, "large.txt"), "x".repeat(900_000));
    const sessionId = await openSession(cli);
    const primings: string[] = [];
    let largest = 0;
    let lastAnswer = "";
    for (let id = 1_000; id < 1_060; id++) {
      const res = await fetch(cli.url, {
        method: "POST",
        headers: inSession(sessionId),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "oc_api", arguments: { method: "GET", path: "/file/content", query: { path: "large.txt" }, max_chars: 1_000_000 } },
        }),
      });
      const events = await readEvents(res, (e) => e.json?.id === id);
      primings.push(events[0]!.id!);
      const answer = events.find((e) => e.json?.id === id)!;
      expect(answer.json!.result, answer.data.slice(0, 500)).toBeTruthy();
      largest = Math.max(largest, Buffer.byteLength(answer.data));
      lastAnswer = answer.data;
    }
    // 60 answers hold more than the store may keep.
    expect(60 * largest, lastAnswer.slice(0, 400)).toBeGreaterThan(2 * STORE_BYTES);
    // What the store holds is what a replay of every stream gives back.
    let held = 0;
    let newest = false;
    for (const [i, priming] of primings.entries()) {
      const events = await readEvents(await replay(cli, sessionId, priming));
      held += events.reduce((n, e) => n + Buffer.byteLength(e.data), 0);
      if (i === primings.length - 1) newest = events.some((e) => e.json?.id === 1_059 && e.json.result);
    }
    expect(held).toBeLessThanOrEqual(STORE_BYTES + largest);
    expect(newest).toBe(true);
  });

  it("a slow body is cut at OPENCODE_CONDUCTOR_HTTP_REQUEST_TIMEOUT_S with a 408 that names it", { timeout: 120_000 }, async () => {
    const cli = await start({ OPENCODE_CONDUCTOR_HTTP_REQUEST_TIMEOUT_S: "2" });
    const t0 = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = tcp(cli.port, "127.0.0.1", () => {
        socket.write(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${cli.port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc"`,
        );
      });
      let text = "";
      socket.on("data", (c) => (text += c.toString()));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    const elapsed = Date.now() - t0;
    expect(answer).toMatch(/^HTTP\/1.1 408/);
    expect(answer).toContain("OPENCODE_CONDUCTOR_HTTP_REQUEST_TIMEOUT_S");
    expect(elapsed).toBeGreaterThanOrEqual(1_900);
    expect(elapsed).toBeLessThan(30_000); // far below Node's 300 s
  });

  it("an idle session is closed after OPENCODE_CONDUCTOR_HTTP_SESSION_TTL_S; its id then gets 404", { timeout: 120_000 }, async () => {
    const cli = await start({ OPENCODE_CONDUCTOR_HTTP_SESSION_TTL_S: "2" });
    const sessionId = await openSession(cli);
    const ceiling = Date.now() + 60_000;
    while (!cli.stderr().includes(`closed MCP session ${sessionId}`) && Date.now() < ceiling) await new Promise((r) => setTimeout(r, 100));
    expect(cli.stderr()).toContain(`closed MCP session ${sessionId} (idle 2 s)`);
    const res = await fetch(cli.url, { method: "POST", headers: inSession(sessionId), body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) });
    expect(res.status).toBe(404);
  });
});
