// The console's model of tasks: task records, live session states and pending requests folded
// into rows and timeline segments. Events here are the shapes the real server sends (the browser
// test drives the same store against real opencode); these pin the folding rules.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readTaskRecords, TaskRecords } from "../../../src/core/governance/task-records.js";
import { Store, type PendingView } from "../../../src/console/store.js";

const T0 = Date.parse("2026-01-01T10:00:00.000Z");
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();
const start = (id: string, s = 0) => ({
  event: "start" as const,
  time: iso(s),
  session_id: id,
  tool: "oc_delegate_parallel",
  pid: 42,
  server: "http://127.0.0.1:1",
  batch_id: "batch_1",
  index: 0,
  task: "do it",
});
const permission = (id: string, sessionId: string, s: number): PendingView => ({
  kind: "permission",
  id,
  sessionId,
  permission: "bash",
  patterns: ["ls"],
  always: ["ls *"],
  metadata: {},
  server: "http://127.0.0.1:1",
  asked_at: T0 + s * 1000,
});

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe("console store", () => {
  it("a task runs, waits for an approval, runs again and ends with the tool's status: three timeline segments", () => {
    const store = new Store();
    store.record(start("ses_a"));
    store.live("ses_a", { type: "busy" }, T0 + 1000);
    store.asked(permission("per_1", "ses_a", 2));
    expect(store.tasks.get("ses_a")!.status).toBe("blocked");
    store.replied("per_1", T0 + 5000);
    expect(store.tasks.get("ses_a")!.status).toBe("running");
    store.record({ event: "end", time: iso(8), session_id: "ses_a", status: "done", tokens: 120, cost: 0.01, files: ["a.txt"] });
    const task = store.tasks.get("ses_a")!;
    expect(task).toMatchObject({ status: "done", status_from: "tool", tokens: 120, files: ["a.txt"], approvals: [T0 + 2000], ended_at: T0 + 8000 });
    expect(task.segments).toEqual([
      { state: "running", from: T0, to: T0 + 2000 },
      { state: "blocked", from: T0 + 2000, to: T0 + 5000 },
      { state: "running", from: T0 + 5000, to: T0 + 8000 },
    ]);
    expect(store.pending.size).toBe(0);
  });

  it("a retry shows as its own segment; an answer of running or blocked is not an end", () => {
    const store = new Store();
    store.record(start("ses_b"));
    store.live("ses_b", { type: "retry", attempt: 2, message: "overloaded" }, T0 + 3000);
    expect(store.tasks.get("ses_b")!.retry).toEqual({ attempt: 2, message: "overloaded" });
    store.record({ event: "end", time: iso(4), session_id: "ses_b", status: "running" });
    expect(store.tasks.get("ses_b")!.ended_at).toBeUndefined();
    store.live("ses_b", { type: "busy" }, T0 + 6000);
    expect(store.tasks.get("ses_b")!.segments.map((s) => s.state)).toEqual(["running", "retry", "running"]);
  });

  it("what opencode recorded (lost) stands when the MCP call never answered, but never overrides the tool's own answer", () => {
    const store = new Store();
    store.record(start("ses_c"));
    store.settled("ses_c", { status: "lost", error: "opencode recorded no end of this turn." }, T0 + 9000);
    expect(store.tasks.get("ses_c")).toMatchObject({ status: "lost", status_from: "opencode", ended_at: T0 + 9000 });
    store.record(start("ses_d"));
    store.record({ event: "end", time: iso(2), session_id: "ses_d", status: "error", error: "Bad request" });
    store.settled("ses_d", { status: "done" });
    expect(store.tasks.get("ses_d")).toMatchObject({ status: "error", status_from: "tool" });
  });

  it("a tool's unreachable answer is no end: opencode's later record (done) replaces it, as it replaces nothing the tool decided", () => {
    const store = new Store();
    store.record(start("ses_u"));
    store.record({ event: "end", time: iso(40), session_id: "ses_u", status: "unreachable", error: "opencode at … does not answer" });
    expect(store.tasks.get("ses_u")).toMatchObject({ status: "unreachable", status_from: "tool" });
    expect(store.tasks.get("ses_u")!.ended_at).toBeUndefined();
    // opencode answers again: busy, then what oc_result reads once the turn ended.
    store.live("ses_u", { type: "busy" }, T0 + 61_000);
    expect(store.tasks.get("ses_u")).toMatchObject({ status: "running", status_from: "opencode" });
    store.settled("ses_u", { status: "done", tokens: 12 }, T0 + 66_000);
    expect(store.tasks.get("ses_u")).toMatchObject({ status: "done", status_from: "opencode", ended_at: T0 + 66_000 });
    // A read that still gets no answer keeps the task open, never ends it.
    store.record(start("ses_v"));
    store.settled("ses_v", { status: "unreachable" }, T0 + 5_000);
    expect(store.tasks.get("ses_v")).toMatchObject({ status: "unreachable", status_from: "opencode" });
    expect(store.tasks.get("ses_v")!.ended_at).toBeUndefined();
  });

  it("announces each change, and resetPending drops what a server no longer lists", () => {
    const store = new Store();
    const seen: string[] = [];
    store.subscribe((c) => seen.push(c.type));
    store.record(start("ses_e"));
    store.asked(permission("per_2", "ses_e", 1));
    store.resetPending("http://127.0.0.1:1", []);
    expect(store.pending.size).toBe(0);
    expect(seen).toEqual(["task", "task", "pending", "pending"]);
  });

  it("task records: appended lines read back in order, 0600, a torn last line skipped", async () => {
    const dir = await mkdtemp(join(tmpdir(), "occ-tasks-"));
    dirs.push(dir);
    const path = join(dir, "tasks.jsonl");
    const log = new TaskRecords(path);
    await log.append({ event: "start", session_id: "ses_f", tool: "oc_delegate", server: "http://127.0.0.1:2", task: "x" });
    await log.append({ event: "end", session_id: "ses_f", status: "done" });
    await log.close();
    const { appendFile, stat } = await import("node:fs/promises");
    await appendFile(path, '{"event":"start","session_id":"ses_g"');
    const records = await readTaskRecords(path);
    expect(records.map((r) => [r.event, r.session_id])).toEqual([
      ["start", "ses_f"],
      ["end", "ses_f"],
    ]);
    expect(records[0]).toMatchObject({ pid: process.pid, server: "http://127.0.0.1:2" });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readFile(path, "utf8")).not.toContain("password");
  });

  it("a worktree task shows its registry row: branch, base and head, merge state; a row that arrives first waits for the record", () => {
    const store = new Store();
    const row = {
      id: "repo-1",
      state: "running" as const,
      repo: "/r/.git",
      root: "/r",
      path: "/state/worktrees/repo-1",
      subdir: "",
      base: "a".repeat(40),
      port: 41234,
      ownerPid: 42,
      createdAt: iso(0),
      sessionId: "ses_w",
    };
    store.worktrees([row]);
    store.record({ ...start("ses_w"), isolation: "worktree" as never });
    expect(store.tasks.get("ses_w")!.worktree).toEqual({ state: "running", base: row.base, path: row.path, port: 41234, checkout_removed: false });
    const merge = { into: "main", result: "conflict" as const, files: ["shared.txt"], with: ["ses_v"], at: iso(9) };
    store.worktrees([{ ...row, state: "finished", branch: "conductor/ses_w", head: "b".repeat(40), changed: true, finishedAt: iso(5), merge }]);
    expect(store.tasks.get("ses_w")!.worktree).toMatchObject({ state: "finished", branch: "conductor/ses_w", head: "b".repeat(40), changed: true, merge });
    // Removed from the registry (the task's worktree and branch were removed): no worktree view any more.
    store.worktrees([]);
    expect(store.tasks.get("ses_w")!.worktree).toBeUndefined();
  });
});
