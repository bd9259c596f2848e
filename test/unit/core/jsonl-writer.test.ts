// The one writer per file (jsonl-writer.ts) on real files in temp dirs: shared by every user in the
// process with no descriptor held between writes, rotation by size with kept segments (also with
// two writers racing on one file, as two processes would), and failures that are held, reported
// once, retried by itself and written in order when the file can be written again. Cases a root
// user also meets run here (a directory in the way, /dev/full, a folder that cannot exist); those
// only permissions cause are in test/e2e/mcp/audit-unwritable.test.ts, run as another user.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AuditLog, readAuditPage } from "../../../src/core/governance/audit.js";
import { JsonlWriter, RETRY_MS, sharedWriter, type HealthChange } from "../../../src/core/governance/jsonl-writer.js";
import { segmentsOf } from "../../../src/core/governance/segments.js";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "occ-writer-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** The next health change of `writer` (a generous ceiling: the writer retries every RETRY_MS by itself). */
function nextChange(writer: JsonlWriter, kind: HealthChange["kind"]): Promise<HealthChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${kind}" within ${RETRY_MS * 6} ms`)), RETRY_MS * 6);
    const off = writer.onHealth((change) => {
      if (change.kind !== kind) return;
      clearTimeout(timer);
      off();
      resolve(change);
    });
  });
}

/** Descriptors this process holds on `path`. */
const openOn = (path: string) =>
  readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  });

describe("one writer per file", () => {
  it("is shared by every log of the same file, holds no descriptor between writes, lines whole and 0600", async () => {
    const path = join(tempDir(), "nested", "audit.jsonl");
    const logs = Array.from({ length: 20 }, () => new AuditLog(path)); // as 20 HTTP sessions
    expect(new Set(logs.map((l) => l.writer)).size).toBe(1);
    expect(sharedWriter(path)).toBe(logs[0]!.writer);
    await Promise.all(Array.from({ length: 200 }, (_, i) => logs[i % 20]!.append({ tool: "oc_delegate", outcome: "done", session_id: `ses_${i}` })));
    await logs[0]!.close();
    expect(lines(path).map((e) => e.session_id)).toEqual(Array.from({ length: 200 }, (_, i) => `ses_${i}`));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(openOn(path)).toEqual([]);
  });

  it("rotates by size, keeps `keep` segments, and every kept line reads back once, newest first", async () => {
    const path = join(tempDir(), "audit.jsonl");
    const log = new AuditLog(path, { maxBytes: 4_096, keep: 3 });
    for (let i = 0; i < 200; i++) await log.append({ tool: "oc_send", outcome: "ok", session_id: `ses_${String(i).padStart(4, "0")}` });
    const segments = await segmentsOf(path);
    expect(segments.map((s) => s.seq).slice(0, -1)).toHaveLength(3);
    expect(segments.at(-1)!.path).toBe(path);
    for (const s of segments) expect(s.size).toBeLessThanOrEqual(4_096);
    const kept = segments.flatMap((s) => lines(s.path).map((e) => e.session_id));
    expect(kept.at(-1)).toBe("ses_0199");
    const read: unknown[] = [];
    let before: string | undefined;
    do {
      const page = await readAuditPage(path, { limit: 7, before });
      read.push(...page.entries.map((e) => e.session_id));
      before = page.next;
    } while (before);
    expect(read).toEqual([...kept].reverse());
  });

  it("a file that cannot be rotated (the lock file cannot be made) still takes every line", async () => {
    const path = join(tempDir(), "audit.jsonl");
    mkdirSync(`${path}.lock`); // a lock that is a folder: it cannot be taken, nor removed as a stale file
    const writer = new JsonlWriter(path, { maxBytes: 256, keep: 2 });
    const results = await Promise.all(Array.from({ length: 20 }, (_, n) => writer.append(JSON.stringify({ n, pad: "y".repeat(40) }))));
    expect(results.every((r) => r.written)).toBe(true);
    expect(lines(path).map((e) => e.n)).toEqual(Array.from({ length: 20 }, (_, n) => n));
    expect(writer.health().writable).toBe(true);
  });

  it("two writers of one file (two processes) rotating at once lose and tear nothing", async () => {
    const path = join(tempDir(), "tasks.jsonl");
    const rotation = { maxBytes: 8_192, keep: 1_000 };
    const a = new JsonlWriter(path, rotation);
    const b = new JsonlWriter(path, rotation);
    const results = await Promise.all(
      Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).append(JSON.stringify({ time: new Date().toISOString(), n: i, pad: "x".repeat(100) }))),
    );
    expect(results.every((r) => r.written)).toBe(true);
    const all = (await segmentsOf(path)).flatMap((s) => lines(s.path).map((e) => e.n));
    expect([...all].sort((x, y) => Number(x) - Number(y))).toEqual(Array.from({ length: 400 }, (_, i) => i));
  });
});

describe("a file that cannot be written", () => {
  it("a directory in the way: said once, lines held, retried by itself and written in order once it can be, with the outage recorded", async () => {
    const dir = tempDir();
    const path = join(dir, "audit.jsonl");
    mkdirSync(path);
    const log = new AuditLog(path);
    await log.writer!.checked;
    expect(log.writer!.health()).toMatchObject({ writable: false, error: expect.stringMatching(/EISDIR/), held: 0 });
    const changes: HealthChange[] = [];
    log.writer!.onHealth((c) => changes.push(c));
    const first = await log.append({ tool: "oc_delegate", outcome: "done", session_id: "ses_1" });
    const second = await log.append({ tool: "oc_send", outcome: "ok", session_id: "ses_1" });
    expect(first).toEqual({ written: false, error: expect.stringMatching(/EISDIR/) });
    expect(second.written).toBe(false);
    expect(log.writer!.health()).toMatchObject({ writable: false, held: 2, since: expect.any(String) });
    expect(changes).toEqual([]); // already known unwritable: not said again
    rmSync(path, { recursive: true });
    const recovered = await nextChange(log.writer!, "recovered");
    expect(recovered).toMatchObject({ kind: "recovered", written: 2, outage: { error: expect.stringMatching(/EISDIR/), dropped: 0 } });
    await log.close();
    const entries = lines(path);
    expect(entries.map((e) => e.tool)).toEqual(["oc_delegate", "oc_send", "audit-trail"]);
    expect(entries[2]).toMatchObject({ outcome: "unwritable", error: expect.stringMatching(/EISDIR/), detail: { held_lines_written: 2, dropped_lines: 0 } });
    expect(log.writer!.health()).toEqual({ path, writable: true, held: 0, dropped: 0 });
  });

  it("holds at most 1,000 lines: the oldest are dropped and counted, the rest written", async () => {
    const path = join(tempDir(), "audit.jsonl");
    mkdirSync(path);
    const log = new AuditLog(path);
    await log.writer!.checked;
    await Promise.all(Array.from({ length: 1_100 }, (_, i) => log.append({ tool: "oc_send", outcome: "ok", session_id: `ses_${i}` })));
    expect(log.writer!.health()).toMatchObject({ held: 1_000, dropped: 100 });
    rmSync(path, { recursive: true });
    await log.writer!.check();
    await log.close();
    const entries = lines(path);
    expect(entries).toHaveLength(1_001);
    expect(entries[0]!.session_id).toBe("ses_100");
    expect(entries.at(-1)).toMatchObject({ tool: "audit-trail", detail: { held_lines_written: 1_000, dropped_lines: 100 } });
  });

  it("/dev/full: the write fails (ENOSPC), nothing is rotated or chmod-ed, and a now-or-never line is not held", async () => {
    const mode = statSync("/dev/full").mode;
    const writer = new JsonlWriter("/dev/full", { maxBytes: 1, keep: 1 });
    await writer.checked;
    expect(writer.health().writable).toBe(true); // a device: only a write can tell
    const failed = nextChange(writer, "failed");
    expect(await writer.append('{"a":1}')).toEqual({ written: false, error: expect.stringMatching(/ENOSPC/) });
    expect((await failed).health).toMatchObject({ writable: false, held: 1 });
    expect(await writer.append('{"b":2}', { nowOrNever: true })).toMatchObject({ written: false });
    expect(writer.health().held).toBe(1);
    expect(statSync("/dev/full").mode).toBe(mode);
    expect(statSync("/dev/full").isCharacterDevice()).toBe(true);
  });

  it("a folder that cannot exist (a file in the way) is found before any line, without creating anything", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "state"), "a file, not a folder");
    const writer = new JsonlWriter(join(dir, "state", "audit.jsonl"));
    await writer.checked;
    expect(writer.health()).toMatchObject({ writable: false, error: expect.stringMatching(/ENOTDIR/) });
    expect(readdirSync(dir)).toEqual(["state"]);
    rmSync(join(dir, "state"));
    expect((await writer.check()).writable).toBe(true);
    expect(readdirSync(dir)).toEqual([]); // a check writes nothing
  });
});
