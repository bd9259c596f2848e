// The delegation ledger from the library on a real opencode 2.x server: a repeated requestId
// starts one agent, a permission shows as input_required and completes once answered, and cancel
// interrupts the session. Each outcome is compared with the session as the 2.x server recorded it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import type { PlacedResult } from "../../src/core/placement/result.js";
import { summarizeTurn } from "../../src/core/turns/summary.js";
import type { TestOpencode } from "../support/opencode.js";
import { startOpencode2 } from "../support/opencode2.js";
import { hang, text, toolCall } from "../support/scripted-model.js";

let server: TestOpencode;
let conductor: Conductor;
let stateDir: string;

beforeAll(async () => {
  // `shell: ask` makes every shell call wait for a permission reply.
  server = await startOpencode2({ permission: { shell: "ask" } });
  stateDir = mkdtempSync(join(tmpdir(), "occ-ledger-v2-"));
  conductor = await Conductor.connect({ url: server.url, password: server.password, directory: server.directory, stateDir });
});
afterAll(async () => {
  conductor?.close();
  await server?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const chats = () => server.model.requests.filter((r) => r.kind === "chat").length;
/** The session's last turn as the server recorded it (re-read). */
async function recorded(sessionId: string) {
  return summarizeTurn({ sessionId, messages: await conductor.engine.messages(sessionId), outcome: "idle", pending: [] });
}

describe("the delegation ledger on opencode 2.x", () => {
  it("a repeated requestId starts one agent; both answers are the recorded turn", async () => {
    server.model.queue(text("Only once on 2.x.", { delayMs: 1_000 }));
    const before = chats();
    const [a, b] = await Promise.all([
      conductor.delegate({ task: "say it once", title: "once", requestId: "v2-once" }),
      conductor.delegate({ task: "say it once", title: "once", requestId: "v2-once" }),
    ]);
    expect(b.sessionId).toBe(a.sessionId);
    expect([a.replayed, b.replayed].filter(Boolean)).toEqual([true]);
    expect(chats() - before).toBe(1);
    const truth = await recorded(a.sessionId);
    expect(truth).toMatchObject({ status: "done", answer: "Only once on 2.x." });
    expect([a.answer, b.answer]).toEqual([truth.answer, truth.answer]);
    const id = (await conductor.delegations.list()).find((d) => d.requestId === "v2-once")!.id;
    expect(await conductor.delegations.get(id)).toMatchObject({ status: "completed", turn: "done" });
  });

  it("a permission shows as input_required with the request; answered, it completes as recorded", async () => {
    server.model.queue(toolCall("shell", { command: "echo ledger" }), text("ran it"));
    // The server's `shell: ask` asks (the pre-release takes no per-session rules).
    const handle = await conductor.delegations.delegate({ task: "run the command", title: "permission" });
    const blocked = await vi.waitFor(
      async () => {
        const d = await conductor.delegations.get(handle.id);
        if (d.status !== "input_required") throw new Error(`still ${d.status}`);
        return d;
      },
      { timeout: 60_000, interval: 200 },
    );
    expect(blocked.pending).toEqual([expect.objectContaining({ kind: "permission", sessionId: handle.sessions[0] })]);
    await conductor.answer({ requestId: blocked.pending![0]!.id, decision: "once" });
    const done = await conductor.delegations.wait(handle.id, { timeoutMs: 90_000 });
    expect(done).toMatchObject({ status: "completed", turn: "done" });
    expect((done.result as PlacedResult).answer).toBe((await recorded(handle.sessions[0]!)).answer);
  });

  it("cancel interrupts the session: cancelled, and the server recorded the interruption", async () => {
    server.model.queue(hang({ text: "partial " }));
    const before = chats();
    const handle = await conductor.delegations.delegate({ task: "hang until cancelled", title: "cancel" });
    await server.model.waitForRequests(before + 1, { kind: "chat", timeoutMs: 60_000 });
    const stopped = await conductor.delegations.cancel(handle.id);
    expect(stopped.status).toBe("cancelled");
    expect((stopped.result as PlacedResult).status).toBe("interrupted");
    expect((await recorded(handle.sessions[0]!)).status).toBe("interrupted");
  });
});
