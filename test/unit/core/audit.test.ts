import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AuditLog, MAX_LINE, formatAuditEntry, readAudit } from "../../../src/core/governance/audit.js";
import { digestPrompt } from "../../../src/core/governance/prompt-digest.js";

const dirs: string[] = [];
function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "occ-audit-"));
  dirs.push(dir);
  return join(dir, "nested", "audit.jsonl");
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("audit log", () => {
  it("appends whole lines under concurrency, mode 0600", async () => {
    const path = tempPath();
    const logs = [new AuditLog(path), new AuditLog(path)]; // two writers, as with two HTTP sessions
    const big = "x".repeat(20_000);
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => logs[i % 2]!.append({ tool: "oc_delegate", outcome: "done", session_id: `ses_${i}`, detail: { big } })),
    );
    await Promise.all(logs.map((l) => l.close()));
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(200);
    for (const line of lines) expect(JSON.parse(line).detail.big).toMatch(/^x{300}… \(20000 chars\)$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("bounds every line: a 1 MB session id or error becomes a short prefix, the line stays under 4 KB", async () => {
    const path = tempPath();
    const log = new AuditLog(path);
    const huge = "y".repeat(1024 * 1024);
    await log.append({
      tool: "oc_wait",
      outcome: "error",
      session_id: huge,
      error: huge,
      files: Array.from({ length: 500 }, () => huge),
      detail: { deep: { a: { b: { c: { d: { e: huge } } } } } },
    });
    await log.close();
    const line = readFileSync(path, "utf8").trimEnd();
    expect(line.length).toBeLessThan(MAX_LINE);
    const entry = JSON.parse(line);
    expect(entry.session_id.startsWith("yyy")).toBe(true);
    expect(entry.error).toContain(`(${huge.length} chars)`);
  });

  it("filters by session, tool and time, newest last", async () => {
    const path = tempPath();
    const log = new AuditLog(path);
    await log.append({ time: "2026-01-01T00:00:00.000Z", tool: "oc_delegate", outcome: "done", session_id: "ses_a" });
    await log.append({ time: "2026-01-02T00:00:00.000Z", tool: "oc_answer", outcome: "ok", session_id: "ses_a", decision: "once", by: "model" });
    await log.append({ time: "2026-01-03T00:00:00.000Z", tool: "oc_delegate", outcome: "error", session_id: "ses_b" });
    await log.close();
    expect((await readAudit(path, { sessionId: "ses_a" })).map((e) => e.tool)).toEqual(["oc_delegate", "oc_answer"]);
    expect((await readAudit(path, { tool: "oc_delegate" })).map((e) => e.session_id)).toEqual(["ses_a", "ses_b"]);
    expect((await readAudit(path, { since: "2026-01-02T00:00:00.000Z" })).length).toBe(2);
    expect((await readAudit(path, { until: "2026-01-01T12:00:00.000Z" })).length).toBe(1);
    expect((await readAudit(path, { limit: 1 }))[0]!.session_id).toBe("ses_b");
    expect(await readAudit(join(path, "..", "missing.jsonl"))).toEqual([]);
  });

  it("keeps a prompt as hash, length and first line only", () => {
    const prompt = "Fix the login bug\nthe password is hunter2";
    const d = digestPrompt(prompt);
    expect(d).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), length: prompt.length, first_line: "Fix the login bug" });
    expect(JSON.stringify(d)).not.toContain("hunter2");
  });

  it("formats a line for people", () => {
    const line = formatAuditEntry({
      time: "2026-01-01T00:00:00.000Z",
      tool: "oc_answer",
      outcome: "ok",
      session_id: "ses_a",
      decision: "once",
      by: "human",
      cost: 0.0123,
    });
    expect(line).toContain("decision=once by human");
    expect(line).toContain("cost=$0.0123");
  });

  it("does nothing when off", async () => {
    const log = new AuditLog(undefined);
    await log.append({ tool: "oc_delegate", outcome: "done" });
    await log.close();
  });
});
