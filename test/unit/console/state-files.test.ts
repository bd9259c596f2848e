// The console's follower of the state dir (state-files.ts) on real files: at start the newest task
// records across rotated segments, then every appended record exactly once and in order while the
// file rotates under it (fs.watch, no polling), and the audit trail's growth announced at a bounded rate.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AuditLog } from "../../../src/core/governance/audit.js";
import { segmentsOf } from "../../../src/core/governance/segments.js";
import { TaskRecords, type TaskRecord } from "../../../src/core/governance/task-records.js";
import { followStateFiles } from "../../../src/console/state-files.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Callbacks call `changed()`; a test waits until its condition holds after one (a generous ceiling). */
function changes() {
  const waiting = new Set<() => void>();
  return {
    changed: () => waiting.forEach((check) => check()),
    until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => (waiting.delete(test), reject(new Error(`${what}: not within ${ms} ms`))), ms);
        const test = () => {
          if (!check()) return;
          clearTimeout(timer);
          waiting.delete(test);
          resolve();
        };
        waiting.add(test);
        test();
      });
    },
  };
}

const start = (n: number) => ({ event: "start" as const, session_id: `ses_${n}`, tool: "oc_delegate", server: "http://127.0.0.1:9", task: `task ${n}` });

describe("following the state dir", () => {
  it("reads the newest records across segments, then each new one once, in order, while the file rotates", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "occ-follow-"));
    dirs.push(stateDir);
    const tasksPath = join(stateDir, "tasks.jsonl");
    const records = new TaskRecords(tasksPath, { maxBytes: 2_048, keep: 50 });
    for (let n = 0; n < 30; n++) await records.append(start(n));
    expect((await segmentsOf(tasksPath)).length).toBeGreaterThan(2);
    const seen: TaskRecord[] = [];
    const audits: number[] = [];
    const { changed, until } = changes();
    const files = await followStateFiles({
      stateDir,
      tasksPath,
      auditPath: join(stateDir, "audit.jsonl"),
      onRecord: (r) => (seen.push(r), changed()),
      onInstances: () => undefined,
      onWorktrees: () => undefined,
      onAudit: () => (audits.push(Date.now()), changed()),
    });
    try {
      expect(seen.map((r) => r.session_id)).toEqual(Array.from({ length: 30 }, (_, n) => `ses_${n}`));
      for (let n = 30; n < 90; n++) await records.append(start(n));
      await until(() => seen.length >= 90, "the appended records");
      expect(seen.map((r) => r.session_id)).toEqual(Array.from({ length: 90 }, (_, n) => `ses_${n}`));

      // 200 audit lines in a burst: announced, but not once per line: the second announcement (the
      // burst's trailing one) comes no sooner than 500 ms after the first (each makes an open page read its newest entries).
      const audit = new AuditLog(join(stateDir, "audit.jsonl"));
      await Promise.all(Array.from({ length: 200 }, (_, i) => audit.append({ tool: "oc_send", outcome: "ok", session_id: `ses_${i}` })));
      await until(() => audits.length >= 2, "the trailing audit announcement");
      expect(audits[1]! - audits[0]!).toBeGreaterThanOrEqual(450);
    } finally {
      files.close();
    }
  });
});
