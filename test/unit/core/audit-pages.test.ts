// Reading the audit trail in pages from its end (jsonl-tail.ts, readAuditPage): each page reads a
// bounded stretch, cursors go on across rotated segments, a time window is found by binary search
// and ends the reading, and the answers equal a plain filter of every line.
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAudit, readAuditPage, type AuditEntry } from "../../../src/core/governance/audit.js";
import { cursorAt, linesBackward, TIME_SLACK_MS } from "../../../src/core/governance/jsonl-tail.js";
import { UsageError } from "../../../src/core/errors.js";

const START = Date.parse("2026-03-01T00:00:00.000Z");
const TOOLS = ["oc_delegate", "oc_send", "oc_answer", "oc_session"];
let dir: string;
let path: string;
/** Every entry written, oldest first (three rotated segments and the live file). */
const all: AuditEntry[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "occ-audit-pages-"));
  path = join(dir, "audit.jsonl");
  // 20,000 entries a second apart, in segments as rotation leaves them: audit.jsonl.1 … .3, then the live file.
  const files = [`${path}.1`, `${path}.2`, `${path}.3`, path];
  for (let i = 0; i < 20_000; i++) {
    const entry: AuditEntry = {
      time: new Date(START + i * 1_000).toISOString(),
      tool: TOOLS[i % 4]!,
      outcome: i % 7 === 0 ? "error" : "done",
      session_id: `ses_${i % 97}`,
      detail: { n: i },
    };
    all.push(entry);
    appendFileSync(files[Math.floor(i / 5_000)]!, `${JSON.stringify(entry)}\n`);
  }
  appendFileSync(path, '{"time":"2026-03-02T00:00:00.000Z","tool":"oc_se'); // a writer half-way through a line
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const newestFirst = (filter: (e: AuditEntry) => boolean) => all.filter(filter).reverse();

async function everyPage(o: Parameters<typeof readAuditPage>[1]): Promise<{ entries: AuditEntry[]; pages: number }> {
  const entries: AuditEntry[] = [];
  let before: string | undefined;
  let pages = 0;
  do {
    const page = await readAuditPage(path, { ...o, before });
    entries.push(...page.entries);
    before = page.next;
    pages += 1;
  } while (before);
  return { entries, pages };
}

/** The reader's first line; then the reader is ended, which closes the segment it holds open. */
async function firstLine<T, R>(lines: AsyncGenerator<T, R>): Promise<IteratorResult<T, R>> {
  const first = await lines.next();
  await lines.return(undefined as R);
  return first;
}

describe("audit pages", () => {
  it("the newest page reads only the end of the trail, skipping the torn last line", async () => {
    const page = await readAuditPage(path, { limit: 25 });
    expect(page.entries).toEqual(newestFirst(() => true).slice(0, 25));
    expect(page.scanned).toBeLessThanOrEqual(256 * 1024); // one chunk
    expect(page.next).toBeDefined();
  });

  it("pages through every segment once, in order, with cursors", async () => {
    const { entries } = await everyPage({ limit: 1_000 });
    expect(entries).toEqual(newestFirst(() => true));
  });

  it("filters by session, tool and outcome as a plain filter would", async () => {
    const { entries } = await everyPage({ sessionId: "ses_5", tool: "oc_send", outcome: "error", limit: 10 });
    expect(entries).toEqual(newestFirst((e) => e.session_id === "ses_5" && e.tool === "oc_send" && e.outcome === "error"));
    expect(entries.length).toBeGreaterThan(0);
  });

  it("a time window: found by binary search (not read from the end) and the reading stops past it", async () => {
    const since = new Date(START + 7_000 * 1_000).toISOString();
    const until = new Date(START + 7_400 * 1_000).toISOString();
    const page = await readAuditPage(path, { since, until, limit: 1_000 });
    expect(page.entries).toEqual(newestFirst((e) => e.time >= since && e.time <= until));
    expect(page.next).toBeUndefined();
    // Only the window and the slack around it were read: a small part of the 20,000 lines.
    expect(page.scanned).toBeLessThan(1_500 * 120);
    const limit = Date.parse(until) + TIME_SLACK_MS;
    const upper = await cursorAt(path, limit, "upper");
    const later = await firstLine(linesBackward(path, { to: upper }));
    expect(Date.parse(JSON.parse((later.value as { text: string }).text).time)).toBeGreaterThan(limit);
    const lower = await cursorAt(path, limit, "lower");
    const earlier = await firstLine(linesBackward(path, { from: lower }));
    expect(Date.parse(JSON.parse((earlier.value as { text: string }).text).time)).toBeLessThanOrEqual(limit);
  });

  it("a page stops after its byte budget and says where to go on", async () => {
    const page = await readAuditPage(path, { sessionId: "ses_none", scanBytes: 100_000 });
    expect(page.entries).toEqual([]);
    expect(page.next).toBeDefined();
    expect(page.scanned).toBeGreaterThanOrEqual(100_000);
    expect(page.scanned).toBeLessThanOrEqual(100_000 + 256 * 1024); // whole chunks
    expect(page.reached).toBeDefined();
    const { pages, entries } = await everyPage({ sessionId: "ses_none", scanBytes: 400_000 });
    expect(entries).toEqual([]);
    expect(pages).toBeGreaterThan(1);
  });

  it("a page holds at most `maxBytes` of entries, and goes on after them", async () => {
    const page = await readAuditPage(path, { limit: 1_000, maxBytes: 10_000 });
    const bytes = page.entries.reduce((sum, e) => sum + JSON.stringify(e).length, 0);
    expect(bytes).toBeGreaterThanOrEqual(10_000);
    expect(bytes).toBeLessThan(10_000 + 200);
    const rest = await readAuditPage(path, { limit: 1, before: page.next });
    expect(rest.entries).toEqual(newestFirst(() => true).slice(page.entries.length, page.entries.length + 1));
  });

  it("readAudit (the library's) reads back as far as it takes, oldest first", async () => {
    const found = await readAudit(path, { sessionId: "ses_3", limit: 5_000 });
    expect(found).toEqual(all.filter((e) => e.session_id === "ses_3"));
  });

  it.each([
    ["not a cursor", /is not a cursor: pass the `next` value of an earlier answer/],
    ["zz.10", /That cursor's part of the trail is gone/],
  ])("refuses the cursor %j, saying what to do", async (before, message) => {
    const error = await readAuditPage(path, { before }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
  });

  it("an empty or missing trail has no page", async () => {
    expect(await readAuditPage(join(dir, "missing.jsonl"))).toEqual({ entries: [], scanned: 0 });
    writeFileSync(join(dir, "empty.jsonl"), "");
    expect(await readAuditPage(join(dir, "empty.jsonl"))).toEqual({ entries: [], scanned: 0 });
  });
});
