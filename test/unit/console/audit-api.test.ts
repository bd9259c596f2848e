// The console's /api/audit and its health banner, on a console started in this process over a temp
// state dir (no opencode: the task records name no server): pages newest first from the trail's end
// with `next` cursors across segments, filters, clear 400s for bad input; and the audit trail's
// health in the live stream, failing and recovering with no one acting.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsole, type RunningConsole } from "../../../src/console/server.js";

let stateDir: string;
let running: RunningConsole;
let cookie: string;
const START = Date.parse("2026-05-01T00:00:00.000Z");

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "occ-console-audit-"));
  const path = join(stateDir, "audit.jsonl");
  // 3,000 entries in a rotated segment and the live file.
  for (let i = 0; i < 3_000; i++)
    appendFileSync(
      i < 1_500 ? `${path}.1` : path,
      `${JSON.stringify({ time: new Date(START + i * 1_000).toISOString(), tool: i % 3 ? "oc_send" : "console", outcome: "ok", detail: { n: i } })}\n`,
    );
  running = await startConsole({ config: { stateDir, auditPath: path } });
  const signIn = await fetch(running.url, { redirect: "manual" });
  cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
});
afterAll(async () => {
  await running?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

const get = (path: string) => fetch(`${running.origin}${path}`, { headers: { cookie } });

describe("console /api/audit", () => {
  it("pages newest first from the end, across segments, with `next`", async () => {
    const seen: number[] = [];
    let before: string | undefined;
    let pages = 0;
    do {
      const r = await get(`/api/audit?size=100${before ? `&before=${encodeURIComponent(before)}` : ""}`);
      expect(r.status).toBe(200);
      const body = (await r.json()) as { entries: Array<{ detail: { n: number } }>; next?: string; size: number; tools: string[] };
      expect(body.size).toBe(100);
      seen.push(...body.entries.map((e) => e.detail.n));
      before = body.next;
      pages += 1;
    } while (before);
    expect(seen).toEqual(Array.from({ length: 3_000 }, (_, i) => 2_999 - i));
    expect(pages).toBe(31);
  });

  it("filters by tool and time, and offers the tools seen as choices", async () => {
    const r = await get(`/api/audit?tool=console&since=${new Date(START + 2_900_000).toISOString()}`);
    const body = (await r.json()) as { entries: Array<{ tool: string; detail: { n: number } }>; next?: string; tools: string[] };
    expect(body.entries.map((e) => e.detail.n)).toEqual([
      2_997, 2_994, 2_991, 2_988, 2_985, 2_982, 2_979, 2_976, 2_973, 2_970, 2_967, 2_964, 2_961, 2_958, 2_955, 2_952, 2_949, 2_946, 2_943, 2_940, 2_937, 2_934,
      2_931, 2_928, 2_925,
    ]);
    expect(body.tools).toEqual(["console", "oc_send"]);
  });

  it.each([
    ["/api/audit?before=garbage", /`before` "garbage" is not a cursor/],
    ["/api/audit?since=soon", /since must be a date or time, got "soon"/],
  ])("%s is a 400 that says what is wrong", async (path, message) => {
    const r = await get(path);
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toMatch(message);
  });
});

/** The audit trail's and task records' health as the page gets it: the snapshot's, then each change. */
async function* healthOf(
  origin: string,
  cookie: string,
  signal: AbortSignal,
): AsyncGenerator<Array<{ name: string; path: string; writable: boolean; text?: string }>> {
  const r = await fetch(`${origin}/api/events`, { headers: { cookie }, signal });
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    for (let end; (end = text.indexOf("\n\n")) >= 0; text = text.slice(end + 2)) {
      const block = text.slice(0, end);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event === "snapshot") yield JSON.parse(data!).health;
      if (event === "health") yield JSON.parse(data!);
    }
  }
}

describe("console health", () => {
  it("the stream says when the audit trail cannot be written, and when it can again, by itself", async () => {
    const dir = mkdtempSync(join(tmpdir(), "occ-console-health-"));
    const path = join(dir, "audit.jsonl");
    mkdirSync(path);
    const unwritable = await startConsole({ config: { stateDir: dir, auditPath: path } });
    const stop = new AbortController();
    try {
      const signIn = await fetch(unwritable.url, { redirect: "manual" });
      const health = healthOf(unwritable.origin, signIn.headers.get("set-cookie")!.split(";")[0]!, stop.signal);
      const audit = async (writable: boolean) => {
        // next(), not for-await: leaving a for-await loop would end the stream.
        for (let step = await health.next(); !step.done; step = await health.next()) {
          const trail = step.value.find((h) => h.name === "audit trail")!;
          if (trail.writable === writable) return { trail, state: step.value };
        }
        throw new Error("the stream ended");
      };
      const down = await audit(false);
      expect(down.trail.text).toMatch(new RegExp(`^the audit trail ${path} cannot be written \\(since .*\\): EISDIR`));
      rmSync(path, { recursive: true });
      const up = await audit(true); // the console checks every RETRY_MS by itself
      expect(up.state).toEqual([
        { name: "audit trail", path, writable: true },
        { name: "task records", path: join(dir, "tasks.jsonl"), writable: true },
      ]);
    } finally {
      stop.abort();
      await unwritable.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
