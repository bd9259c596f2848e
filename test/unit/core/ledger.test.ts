// The delegation ledger without opencode: a request id names one record for every process sharing
// the state dir (two stores on one dir stand for two processes), a repeat waits for the first
// start's sessions and replays them, a start that failed before any session can be tried again,
// a dead owner's claim is taken over, and the status table covers every turn status.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FileLedgerStore } from "../../../src/core/ledger/file-store.js";
import { Ledger } from "../../../src/core/ledger/ledger.js";
import { thisProcess, type LedgerRecord } from "../../../src/core/ledger/record.js";
import { startOnce, type StartHooks } from "../../../src/core/ledger/start-once.js";
import { batchStatusOf, DELEGATION_STATUS, statusOf } from "../../../src/core/ledger/status.js";
import { MemoryLedgerStore } from "../../../src/core/ledger/store.js";
import { delegationView } from "../../../src/core/ledger/view.js";
import type { TurnStatus } from "../../../src/core/turns/summary.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function stateDir(): string {
  const d = mkdtempSync(join(tmpdir(), "occ-ledger-"));
  dirs.push(d);
  return d;
}

const input = (requestId?: string) => ({ kind: "delegate" as const, requestId, origin: "oc_delegate", placement: "here" as const, size: 1 });

/** A start whose session exists at once and whose turn ends when `end()` is called. */
function plan(sessionId: string, counter: { starts: number }) {
  let end!: () => void;
  const ended = new Promise<void>((r) => (end = r));
  return {
    end: () => end(),
    plan: {
      run: async (hooks: StartHooks) => {
        counter.starts++;
        await hooks.onSession(sessionId, 0);
        await ended;
        return { sessionId, status: "done" as const, answer: "first" };
      },
      replay: async (record: LedgerRecord) => ({ sessionId: record.sessions[0]!, status: "done" as const, answer: "replayed" }),
      endOf: (r: { status: TurnStatus }) => ({ status: statusOf(r.status, false) as "completed", at: new Date().toISOString(), result: r as never }),
    },
  };
}

describe("FileLedgerStore", () => {
  it("lets one of the processes on a state dir claim a request id; files are 0600; a removed record frees the id", async () => {
    const dir = stateDir();
    const stores = Array.from({ length: 8 }, () => new FileLedgerStore(dir));
    const [a, b] = stores as [FileLedgerStore, FileLedgerStore];
    const record = (id: string): LedgerRecord => ({
      ...input("req-1"),
      id,
      sessions: [null],
      owner: thisProcess(),
      started: false,
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    });
    const claims = await Promise.all(stores.map((store, i) => store.create(record(`dlg_${String(i).repeat(22)}`))));
    expect(claims.filter((c) => c.created)).toHaveLength(1);
    expect(new Set(claims.map((c) => c.record.id)).size).toBe(1);
    const ra = claims[0]!;
    const files = readdirSync(join(dir, "delegations")).filter((f) => f.endsWith(".json"));
    expect(files).toEqual([`${ra.record.id}.json`]);
    expect(statSync(join(dir, "delegations", files[0]!)).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "delegations")).mode & 0o777).toBe(0o700);
    await b.remove(ra.record);
    expect((await a.create(record("dlg_cccccccccccccccccccccc"))).created).toBe(true);
  });

  it("keeps a start recorded by the request-id log of earlier releases (requests.json)", async () => {
    const dir = stateDir();
    writeFileSync(
      join(dir, "requests.json"),
      JSON.stringify({ old: { requestId: "old", tool: "oc_delegate_parallel", sessionIds: ["ses_a", "ses_b"], startedAt: "2026-01-01T00:00:00.000Z" } }),
    );
    const ledger = new Ledger(async () => new FileLedgerStore(dir));
    const { record, fresh } = await ledger.claim({ ...input("old"), kind: "parallel", size: 2 });
    expect(fresh).toBe(false);
    expect(record).toMatchObject({ kind: "parallel", origin: "oc_delegate_parallel", sessions: ["ses_a", "ses_b"], started: true });
  });
});

describe("startOnce", () => {
  it("starts nothing when the ledger cannot be written, and says where and what to do", async () => {
    const file = join(stateDir(), "not-a-dir");
    writeFileSync(file, "");
    const ledger = new Ledger(async () => new FileLedgerStore(join(file, "state")));
    let ran = false;
    const started = startOnce(ledger, input("req-e"), {
      run: async () => ((ran = true), {}),
      replay: async () => ({}),
      endOf: () => undefined,
    });
    await expect(started.result).rejects.toThrow(/delegation ledger cannot be written in .*not-a-dir.* \(ENOTDIR\): make the state dir writable/);
    expect(ran).toBe(false);
  });

  it("starts once: a concurrent repeat waits for the session and replays it, as does a later one and another process", async () => {
    const dir = stateDir();
    const ledger = new Ledger(async () => new FileLedgerStore(dir));
    const counter = { starts: 0 };
    const first = plan("ses_1", counter);
    const a = startOnce(ledger, input("req-a"), first.plan);
    const b = startOnce(ledger, input("req-a"), first.plan);
    // Either may claim first; the other has the first start's session while that one still waits for its turn.
    const repeat = await Promise.race([a.result, b.result]);
    expect(repeat).toMatchObject({ sessionId: "ses_1", answer: "replayed", replayed: true });
    expect((await a.accepted).sessions).toEqual(["ses_1"]);
    first.end();
    const [ra, rb] = await Promise.all([a.result, b.result]);
    const done = ra.replayed ? rb : ra;
    expect(done).toMatchObject({ answer: "first" });
    expect(done.replayed).toBeUndefined();
    const id = (await a.accepted).id;
    expect((await b.accepted).id).toBe(id);
    // Another process on the same state dir.
    const other = new Ledger(async () => new FileLedgerStore(dir));
    expect(await startOnce(other, input("req-a"), first.plan).result).toMatchObject({ sessionId: "ses_1", replayed: true });
    expect(counter.starts).toBe(1);
    const record = await other.get(id);
    expect(record).toMatchObject({ started: true, returned: true, end: { status: "completed" } });
  });

  it("forgets a start that failed before any session (the id can be tried again), and refuses an id used for another kind", async () => {
    const ledger = new Ledger(async () => new MemoryLedgerStore());
    const failing = startOnce(ledger, input("req-b"), {
      run: async () => Promise.reject(new Error("bad directory")),
      replay: async () => ({}),
      endOf: () => undefined,
    });
    await expect(failing.result).rejects.toThrow("bad directory");
    await expect(failing.accepted).rejects.toThrow("bad directory");
    const counter = { starts: 0 };
    const again = plan("ses_2", counter);
    again.end();
    expect(await startOnce(ledger, input("req-b"), again.plan).result).toMatchObject({ answer: "first" });
    await expect(startOnce(ledger, { ...input("req-b"), kind: "parallel", origin: "oc_delegate_parallel" }, again.plan).result).rejects.toThrow(
      /requestId "req-b" was used for oc_delegate: give this call a new id/,
    );
  });

  it("keeps a start that failed after its session as failed, with the error", async () => {
    const ledger = new Ledger(async () => new MemoryLedgerStore());
    const started = startOnce(ledger, input("req-c"), {
      run: async (hooks) => {
        await hooks.onSession("ses_3", 0);
        throw new Error("opencode went away");
      },
      replay: async () => ({}),
      endOf: () => undefined,
    });
    await expect(started.result).rejects.toThrow("opencode went away");
    const record = await ledger.get((await started.accepted).id);
    expect(record?.end).toMatchObject({ status: "failed", error: { name: "Error", message: "opencode went away" } });
  });

  it("takes over the claim of a process that died before it created a session (nothing was prompted)", async () => {
    const dir = stateDir();
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const store = new FileLedgerStore(dir);
    const now = new Date().toISOString();
    await store.create({
      ...input("req-d"),
      id: "dlg_deaddeaddeaddeaddeadd",
      sessions: [null],
      owner: { ...thisProcess(), pid: Number(dead.stdout), startTime: undefined },
      started: false,
      createdAt: now,
      updatedAt: now,
    });
    const counter = { starts: 0 };
    const fresh = plan("ses_4", counter);
    fresh.end();
    const started = startOnce(new Ledger(async () => new FileLedgerStore(dir)), input("req-d"), fresh.plan);
    expect(await started.result).toMatchObject({ sessionId: "ses_4", answer: "first" });
    expect((await started.accepted).id).not.toBe("dlg_deaddeaddeaddeaddeadd");
    expect(counter.starts).toBe(1);
  });
});

describe("statuses", () => {
  it("maps every turn status: over is completed, running or unknown (unreachable) is working, blocked waits for input; a cancel's interruption is cancelled", () => {
    for (const [turn, status] of Object.entries(DELEGATION_STATUS)) {
      const open = turn === "running" || turn === "unreachable" || turn === "blocked";
      expect(status, turn).toBe(open ? (turn === "blocked" ? "input_required" : "working") : "completed");
    }
    expect(batchStatusOf(["done", "unreachable"], false)).toBe("working");
    expect(statusOf("interrupted", true)).toBe("cancelled");
    expect(statusOf("done", true)).toBe("completed");
    expect(batchStatusOf(["done", "blocked", "running"], false)).toBe("input_required");
    expect(batchStatusOf(["done", "running"], false)).toBe("working");
    expect(batchStatusOf(["done", "error", "not_started"], false)).toBe("completed");
    expect(batchStatusOf(["done", "interrupted", "not_started"], true)).toBe("cancelled");
  });

  it("a view has no TTL while it runs and one from creation once over; it says when to poll", () => {
    const now = Date.now();
    const record: LedgerRecord = {
      ...input(),
      id: "dlg_x",
      sessions: ["ses_1"],
      owner: thisProcess(),
      started: true,
      createdAt: new Date(now - 60_000).toISOString(),
      updatedAt: new Date(now).toISOString(),
    };
    expect(delegationView(record, 3_600_000, { status: "working", turn: "running" })).toMatchObject({
      status: "working",
      turn: "running",
      ttlMs: null,
      pollIntervalMs: 2_000,
    });
    const ended = {
      ...record,
      end: {
        status: "completed" as const,
        at: new Date(now).toISOString(),
        result: { sessionId: "ses_1", status: "done" as const, answer: "All good.\nmore" },
      },
    };
    expect(delegationView(ended, 3_600_000)).toMatchObject({ status: "completed", turn: "done", statusMessage: "done: All good.", ttlMs: 3_660_000 });
  });
});
