// The delegation ledger from the library alone, against the real opencode with the scripted model:
// a repeated request id never starts a second agent (concurrent, later, from another conductor, and
// from a new process after the first was SIGKILLed mid-turn), each task is in the task records, a
// delegation read by id settles on the conductor's verdict, a permission shows as input_required
// with the request, and cancel interrupts the opencode session. Every outcome is compared with the
// session re-read from opencode.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { connect } from "../../../src/client/index.js";
import { Conductor } from "../../../src/core/conductor.js";
import { readTaskRecords, taskRecordsPath } from "../../../src/core/governance/task-records.js";
import type { PlacedResult } from "../../../src/core/placement/result.js";
import { useConductor } from "../../support/conductor.js";
import { offlineEnv } from "../../support/opencode.js";
import { hang, text, toolCall } from "../../support/scripted-model.js";
import { lastAnswer, lastAssistant, readMessages } from "../../support/turns.js";

const h = useConductor({ permission: { bash: "ask" } });
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
// tsx as a loader of this node, not its CLI: the CLI runs the script in a child of its own, which a
// SIGKILL of the CLI leaves running (the library process the test means to kill lived on, orphaned).
const TSX = ["--import", "tsx"];

let stateDir: string;
const conductors: Conductor[] = [];
beforeAll(() => {
  stateDir = mkdtempSync(join(tmpdir(), "occ-ledger-e2e-"));
});
afterAll(() => {
  for (const c of conductors) c.close();
  rmSync(stateDir, { recursive: true, force: true });
});
afterEach(() => {
  expect(h.oc.model.leftovers(), "model steps this test queued but nothing used").toEqual({});
});

/** A library user's conductor on the test's opencode, keeping its ledger in the test's state dir. */
function library(): Conductor {
  const c = new Conductor({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory, stateDir, queue: false });
  conductors.push(c);
  return c;
}

const chats = () => h.oc.model.requests.filter((r) => r.kind === "chat").length;
const opencode = () => connect({ url: h.oc.url, password: h.oc.password, directory: h.oc.directory });
/** The delegation a request id names, as the ledger lists it. */
const named = async (c: Conductor, requestId: string) => (await c.delegations.list()).find((d) => d.requestId === requestId)!;
const recordedAnswer = async (sessionId: string) => lastAnswer(await readMessages(opencode(), sessionId));

describe("the delegation ledger, from the library (e2e)", () => {
  it("a repeated requestId never starts a second agent: at once, later, from another conductor; the task records hold the task", async () => {
    h.oc.model.queue(text("Only once.", { delayMs: 1_500 }));
    const before = chats();
    const c = library();
    const [a, b] = await Promise.all([c.delegate({ task: "say it once", requestId: "lib-once" }), c.delegate({ task: "say it once", requestId: "lib-once" })]);
    expect(b.sessionId).toBe(a.sessionId);
    expect([a.replayed, b.replayed].filter(Boolean)).toEqual([true]);
    const later = await library().delegate({ task: "say it once", requestId: "lib-once" });
    expect(later).toMatchObject({ sessionId: a.sessionId, status: "done", replayed: true });
    expect(chats() - before).toBe(1);
    const answer = await recordedAnswer(a.sessionId);
    expect(answer).toBe("Only once.");
    expect([a.answer, b.answer, later.answer]).toEqual([answer, answer, answer]);

    const lines = (await readTaskRecords(taskRecordsPath(stateDir))).filter((r) => r.session_id === a.sessionId);
    expect(lines.filter((l) => l.event === "start")).toEqual([
      expect.objectContaining({ tool: "delegate", server: h.oc.url, directory: h.oc.directory, task: "say it once" }),
    ]);
    expect(lines.filter((l) => l.event === "end").map((l) => l.event === "end" && l.status)).toContain("done");

    const id = (await named(c, "lib-once")).id;
    const d = await c.delegations.get(id);
    expect(d).toMatchObject({
      id,
      requestId: "lib-once",
      status: "completed",
      turn: "done",
      sessions: [a.sessionId],
      ttlMs: expect.any(Number),
    });
    expect((d.result as PlacedResult).answer).toBe(answer);
    expect((await c.delegations.list()).filter((x) => x.requestId === "lib-once")).toHaveLength(1);
  });

  it("parallel with a requestId replays the batch's sessions", async () => {
    h.oc.model.queue(text("Batch answer."), text("Batch answer."));
    const c = library();
    const first = await c.parallel([{ task: "one" }, { task: "two" }], { requestId: "lib-batch" });
    expect(first.counts).toEqual({ done: 2 });
    const before = chats();
    const again = await library().parallel([{ task: "one" }, { task: "two" }], { requestId: "lib-batch" });
    expect(again.replayed).toBe(true);
    expect(again.results.map((r) => r.sessionId)).toEqual(first.results.map((r) => r.sessionId));
    expect(chats()).toBe(before);
    for (const r of again.results) expect(r.answer).toBe(await recordedAnswer(r.sessionId!));
    const d = await c.delegations.get((await named(c, "lib-batch")).id);
    expect(d).toMatchObject({ kind: "parallel", status: "completed", sessions: first.results.map((r) => r.sessionId) });
  });

  it("survives its process being SIGKILLed mid-turn: a new process settles the same id on opencode's record, and the request id starts nothing new", async () => {
    h.oc.model.queue(text("Survived the kill.", { delayMs: 4_000 }));
    const before = chats();
    const child = spawn(process.execPath, [...TSX, join(import.meta.dirname, "support/ledger-child.ts")], {
      cwd: ROOT,
      env: {
        ...offlineEnv(h.oc.home),
        OPENCODE_URL: h.oc.url,
        OPENCODE_PASSWORD: h.oc.password,
        OCC_DIRECTORY: h.oc.directory,
        OCC_STATE_DIR: stateDir,
        OCC_TASK: "outlive the caller",
        OCC_REQUEST_ID: "lib-killed",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once("line", resolve);
        child.once("exit", (code) => reject(new Error(`ledger-child exited (${code}) before its handle: ${stderr}`)));
      });
      const handle = JSON.parse(line) as { id: string; sessions: string[]; status: string };
      expect(handle).toMatchObject({ id: expect.stringMatching(/^dlg_/), sessions: [expect.stringMatching(/^ses_/)], status: "working" });
      await h.oc.model.waitForRequests(before + 1, { kind: "chat", timeoutMs: 60_000 });
      child.kill("SIGKILL");
      await exited;

      const c = library();
      const now = await c.delegations.get(handle.id);
      expect(["working", "completed"]).toContain(now.status);
      const done = await c.delegations.wait(handle.id, { timeoutMs: 90_000 });
      expect(done).toMatchObject({ status: "completed", turn: "done", sessions: handle.sessions });
      const answer = await recordedAnswer(handle.sessions[0]!);
      expect(answer).toBe("Survived the kill.");
      expect((done.result as PlacedResult).answer).toBe(answer);

      const again = await c.delegate({ task: "outlive the caller", requestId: "lib-killed" });
      expect(again).toMatchObject({ sessionId: handle.sessions[0], replayed: true, answer });
      expect((await named(c, "lib-killed")).id).toBe(handle.id);
      expect(chats() - before).toBe(1);
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
  });

  it("a permission shows as input_required with the request; answered, the delegation completes as opencode recorded it", async () => {
    h.oc.model.queue(toolCall("bash", { command: "echo ledger > ledger.txt", description: "write a marker" }), text("Marker written."));
    const c = library();
    const handle = await c.delegations.delegate({ task: "write the ledger marker", permissions: "agent" });
    const blocked = await vi.waitFor(
      async () => {
        const d = await c.delegations.get(handle.id);
        if (d.status !== "input_required") throw new Error(`still ${d.status}`);
        return d;
      },
      { timeout: 60_000, interval: 200 },
    );
    expect(blocked).toMatchObject({
      turn: "blocked",
      pending: [expect.objectContaining({ kind: "permission", permission: "bash", patterns: ["echo ledger > ledger.txt"] })],
    });
    await c.answer({ requestId: blocked.pending![0]!.id, decision: "once" });
    const done = await c.delegations.wait(handle.id, { timeoutMs: 90_000 });
    expect(done).toMatchObject({ status: "completed", turn: "done" });
    expect((done.result as PlacedResult).answer).toBe(await recordedAnswer(handle.sessions[0]!));
  });

  it("cancel interrupts the opencode session: cancelled, and opencode recorded the abort", async () => {
    h.oc.model.queue(hang());
    const before = chats();
    const c = library();
    const handle = await c.delegations.delegate({ task: "hang until cancelled" });
    await h.oc.model.waitForRequests(before + 1, { kind: "chat", timeoutMs: 60_000 });
    const stopped = await c.delegations.cancel(handle.id);
    expect(stopped.status).toBe("cancelled");
    expect((stopped.result as PlacedResult).status).toBe("interrupted");
    const reply = lastAssistant(await readMessages(opencode(), handle.sessions[0]!));
    expect(reply?.info.role === "assistant" && reply.info.error?.name).toBe("MessageAbortedError");
    expect((await c.delegations.get(handle.id)).status).toBe("cancelled");
  });
});
