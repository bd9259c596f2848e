// An audit trail that cannot be written, through the real MCP server in memory with no opencode at
// all (any request would fail the test): the first failure on stderr, a warning in each answer while
// it lasts, the refusal of work that can change files under OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1
// (before any request), and the recovery noticed by itself with the held lines written. The cases
// only a non-root user meets (permissions) are in test/e2e/mcp/audit-unwritable.test.ts.
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RETRY_MS, sharedWriter, type HealthChange } from "../../../src/core/governance/jsonl-writer.js";
import { changesFiles } from "../../../src/mcp/trail-guard.js";
import { ALL_TOOLS } from "../../../src/mcp/tools/index.js";
import { expectCleanError, useNoOpencode } from "../../support/tool-replay.js";

const none = useNoOpencode();
let dir: string;
let stderr: string[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "occ-trail-guard-"));
  stderr = [];
  const write = process.stderr.write.bind(process.stderr);
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    stderr.push(String(chunk));
    return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

function recovered(path: string): Promise<HealthChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("not recovered")), RETRY_MS * 6);
    const off = sharedWriter(path).onHealth((change) => {
      if (change.kind !== "recovered") return;
      clearTimeout(timer);
      off();
      resolve(change);
    });
  });
}

describe("an audit trail that cannot be written (a directory in its place)", () => {
  it("is said on stderr at once, in each answer while it lasts, and no longer once it can be written, with nothing lost", async () => {
    const path = join(dir, "audit.jsonl");
    mkdirSync(path);
    const m = await none.mcp({ env: { OPENCODE_CONDUCTOR_AUDIT: path } });
    await sharedWriter(path).checked;
    expect(stderr.join("")).toMatch(new RegExp(`opencode-conductor: the audit trail ${path} cannot be written \\(since [^)]+\\): EISDIR`));

    const refused = await m.call("oc_delegate", { task: "x", bogus: 1 });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("does not take `bogus`");
    expect(refused.text).toMatch(/WARNING: the audit trail .* cannot be written .*EISDIR.*; 1 line waits in memory and is written as soon as it can be/);
    expect(refused.text).toContain("OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 would refuse work that can change files");
    const read = await m.call("oc_audit", {});
    expect(read.data.unwritable).toEqual([
      { file: "audit trail", path, error: expect.stringMatching(/EISDIR/), since: expect.any(String), held: 1, dropped: 0 },
    ]);
    expect(stderr.join("").match(/cannot be written/g)).toHaveLength(1); // the first failure, once

    const back = recovered(path);
    rmSync(path, { recursive: true });
    await back;
    await sharedWriter(path).settled(); // the line recording the outage, appended at recovery
    expect(stderr.join("")).toMatch(/the audit trail .* can be written again \(unwritable from .* to .*: EISDIR.*\); 1 held line written/);
    const after = await m.call("oc_audit", {});
    expect(after.text).not.toContain("WARNING");
    expect(after.data.unwritable).toBeUndefined();
    expect((after.data.entries as Array<{ tool: string; outcome: string }>).map((e) => [e.tool, e.outcome])).toEqual([
      ["oc_delegate", "error"],
      ["audit-trail", "unwritable"],
    ]);
  });

  it("with OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 a task is refused with the reason before any request, and the refusal is audited once it can be", async () => {
    const path = join(dir, "audit.jsonl");
    mkdirSync(path);
    const m = await none.mcp({ env: { OPENCODE_CONDUCTOR_AUDIT: path, OPENCODE_CONDUCTOR_AUDIT_REQUIRED: "1" } });
    const r = await m.call("oc_delegate", { task: "Write hello.txt" });
    expectCleanError(r, /^oc_delegate refused, nothing was started: the audit trail .*audit\.jsonl cannot be written \(since .*\): EISDIR/);
    expect(r.text).toContain("OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 refuses work that can change files until it can be");
    expect(r.text).toContain("work that can change files is refused until then");
    expect((await m.call("oc_send", { session_id: "ses_0000000000000000000000000", message: "more" })).text).toMatch(/^oc_send refused, nothing was started/);
    const back = recovered(path);
    rmSync(path, { recursive: true });
    await back;
    await sharedWriter(path).settled(); // the line recording the outage, appended at recovery
    const entries = (await m.call("oc_audit", {})).data.entries as Array<{ tool: string; outcome: string; error?: string }>;
    // The lines that announce work were never written (nothing started); the refusals were.
    expect(entries.map((e) => [e.tool, e.outcome])).toEqual([
      ["oc_delegate", "error"],
      ["oc_send", "error"],
      ["audit-trail", "unwritable"],
    ]);
    expect(entries[0]!.error).toMatch(/^oc_delegate refused, nothing was started/);
  });
});

describe("/dev/full as the audit trail", () => {
  it("opens fine, so only the first write tells: with OPENCODE_CONDUCTOR_AUDIT_REQUIRED=1 the first task is refused (ENOSPC)", async () => {
    const m = await none.mcp({ env: { OPENCODE_CONDUCTOR_AUDIT: "/dev/full", OPENCODE_CONDUCTOR_AUDIT_REQUIRED: "1" } });
    const r = await m.call("oc_delegate", { task: "Write hello.txt", permissions: "auto" });
    expectCleanError(r, /^oc_delegate refused, nothing was started: the audit trail \/dev\/full cannot be written \(since .*\): ENOSPC/);
    expect(stderr.join("")).toMatch(/opencode-conductor: the audit trail \/dev\/full cannot be written .*ENOSPC/);
    expect((await m.call("oc_audit", {})).text).toMatch(/WARNING: the audit trail \/dev\/full cannot be written/);
  });
});

describe("servers of one process (HTTP sessions)", () => {
  it("share one writer per file and hold no descriptor on it between calls", async () => {
    const path = join(dir, "audit.jsonl");
    const servers = await Promise.all([1, 2, 3].map(() => none.mcp({ env: { OPENCODE_CONDUCTOR_AUDIT: path } })));
    await Promise.all(servers.flatMap((m) => [1, 2, 3].map(() => m.call("oc_delegate", { task: "x", bogus: 1 }))));
    await sharedWriter(path).settled();
    const entries = (await servers[0]!.call("oc_audit", {})).data.entries as unknown[];
    expect(entries).toHaveLength(9);
    const open = readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
    expect(open).toEqual([]);
  });
});

describe("which calls can change files (refused under OPENCODE_CONDUCTOR_AUDIT_REQUIRED)", () => {
  const tool = (name: string) => ALL_TOOLS.find((t) => t.name === name)!;
  it.each([
    ["oc_delegate", { task: "x" }, true],
    ["oc_delegate_parallel", { tasks: [] }, true],
    ["oc_send", { message: "x" }, true],
    ["oc_answer", { decision: "once" }, true],
    ["oc_answer", { decision: "reject" }, false],
    ["oc_session", { action: "shell" }, true],
    ["oc_session", { action: "revert" }, true],
    ["oc_session", { action: "rename" }, false],
    ["oc_api", { method: "POST", path: "/session" }, true],
    ["oc_api", { method: "GET", path: "/session" }, false],
    ["oc_api", { operation: "session.list" }, false],
    ["oc_api", { operation: "session.create" }, true],
    ["oc_interrupt", {}, false],
    ["oc_instances", { action: "stop" }, false],
    ["oc_result", {}, false],
  ])("%s %j: %s", async (name, args, expected) => {
    // As every call does first (register-tool.ts): oc_api's decision reads the operation table it loads.
    await tool(name).load?.();
    expect(changesFiles(tool(name), args)).toBe(expected);
  });
});
