// Stopping a delegation while its sub-agent runs, on the opencode 2.x pre-release: the delegation's
// cancel (conductor.delegations.cancel, which the MCP Tasks cancel uses) and the interrupt
// (conductor.interrupt, oc_interrupt) both interrupt the delegated session. Compared with opencode's
// record, re-read from the server: both sessions' messages, the running sessions (`session.active`),
// the child's open permissions, each session's outcome event.
// - The sub-agent's model call hangs: 2.x interrupts the child with the parent (both executions
//   `session.execution.interrupted`, both steps `aborted`, the child's model request closed); nothing
//   runs on, and the delegation is `cancelled` with the parent's interrupted turn, live and from a
//   fresh conductor.
// - The sub-agent waits on a permission: the child's shell call fails `aborted` with its step, the
//   permission is gone from the list (2.x drops it, unlike 1.x), the command never runs.
// Facts: docs/opencode-2x-behaviour.md ("Stopping a delegation while its sub-agent runs").
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Conductor } from "../../src/core/conductor.js";
import { startV2Fixture, type V2Fixture } from "../support/opencode2.js";
import { hang, toolCall } from "../support/scripted-model.js";
import { isOutcome } from "../support/v2-events.js";

let v2: V2Fixture;
let stateDir: string;
const conductors: Conductor[] = [];
beforeAll(async () => {
  v2 = await startV2Fixture({ permission: { shell: "ask" } });
  stateDir = mkdtempSync(join(tmpdir(), "occ-subagent-cancel-v2-"));
});
afterAll(async () => {
  for (const c of conductors) c.close();
  await v2?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});
afterEach(() => {
  expect(v2.server.model.leftovers(), "model steps this test queued but nothing used").toEqual({});
});

/** A conductor keeping its delegations in the test's state dir; a fresh one reads them as another process would. */
async function library(): Promise<Conductor> {
  const c = await Conductor.connect({ url: v2.server.url, password: v2.server.password, directory: v2.server.directory, stateDir, queue: false });
  conductors.push(c);
  return c;
}

const subagentCall = (description: string) => toolCall("subagent", { agent: "general", description, prompt: `${description}, then say so` });
const chats = () => v2.server.model.requests.filter((r) => r.kind === "chat").length;

/** opencode's record: both sessions' messages, the running sessions, the child's open permissions, each session's outcome event since `from`. */
async function recorded(sessionID: string, from: number) {
  const children = ((await v2.client.request("session.list", { query: { parentID: sessionID } })) as { data: Array<{ id: string }> }).data;
  expect(children).toHaveLength(1);
  const child = children[0]!;
  const [messages, childMessages, active, permissions] = await Promise.all([
    v2.messages(sessionID),
    v2.messages(child.id),
    v2.client.request("session.active", {}) as Promise<{ data: Record<string, unknown> }>,
    v2.client.request("permission.list", { path: { sessionID: child.id } }) as Promise<{ data: unknown[] }>,
  ]);
  const outcome = async (id: string) => (await v2.log.waitFor(isOutcome(id), { after: from })).type;
  const tools = (ms: typeof messages) => ms.flatMap((m) => (m.content ?? []).flatMap((c) => (c.type === "tool" ? [[c.name, c.state?.status]] : [])));
  return {
    child,
    last: messages.at(-1)!,
    childLast: childMessages.at(-1)!,
    prompt: messages.findLast((m) => m.type === "user")!.id,
    tools: tools(messages),
    childTools: tools(childMessages),
    outcomes: [await outcome(sessionID), await outcome(child.id)],
    running: Object.keys(active.data),
    permissions: permissions.data,
  };
}
type Recorded = Awaited<ReturnType<typeof recorded>>;

/** The parent's turn as opencode recorded it: its last step's error, or its own last words. */
function expectedTurn(rec: Recorded) {
  return rec.last.error
    ? { status: "interrupted", error: expect.objectContaining({ name: rec.last.error.type, message: rec.last.error.message }), messageId: rec.prompt }
    : { status: "done", messageId: rec.prompt };
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++)
    if (await check()) return void 0;
    else await new Promise((r) => setTimeout(r, 100));
  throw new Error(`timed out waiting for ${what}`);
}

describe("stopping a delegation while its sub-agent runs, on opencode 2.x", () => {
  it("the sub-agent's model call hangs: cancel interrupts both executions as opencode records it, nothing runs on, and the delegation reads cancelled, live and from a fresh conductor", async () => {
    v2.server.model.queue(subagentCall("hang here"), hang({ text: "child partial " }));
    const before = chats();
    const from = v2.log.events.length;
    const c = await library();
    const handle = await c.delegations.delegate({ task: "use a sub-agent that hangs" });
    const [, childCall] = (await v2.server.model.waitForRequests(before + 2, { kind: "chat", timeoutMs: 60_000 })).slice(-2);
    const stopped = await c.delegations.cancel(handle.id);

    const parent = handle.sessions[0]!;
    const rec = await recorded(parent, from);
    await v2.server.model.waitForEnd(childCall!, { timeoutMs: 10_000 });
    expect(childCall!.sessionId).toBe(rec.child.id);
    expect(rec.outcomes).toEqual(["session.execution.interrupted", "session.execution.interrupted"]);
    expect(rec.childLast).toMatchObject({ type: "assistant", finish: "error", error: { type: "aborted" } });
    expect(rec.last).toMatchObject({ type: "assistant", finish: "error", error: { type: "aborted" } });
    expect(rec.tools).toEqual([["subagent", "error"]]);
    expect(rec.running).toEqual([]);
    // Nothing asks the model again once stopped.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(chats()).toBe(before + 2);

    const turn = expectedTurn(rec);
    expect(turn.status).toBe("interrupted");
    expect(stopped).toMatchObject({ status: "cancelled", turn: "interrupted", result: turn });
    const fresh = await library();
    expect(await fresh.result(parent)).toMatchObject({ state: "idle", last: turn });
    expect(await fresh.delegations.get(handle.id)).toMatchObject({ status: "cancelled", turn: "interrupted", result: turn });
  });

  it("the sub-agent waits on a permission: cancel interrupts both, the request is gone from opencode's list and the command never runs", async () => {
    v2.server.model.queue(subagentCall("write a marker"), toolCall("shell", { command: "echo child > cancelled.txt" }));
    const from = v2.log.events.length;
    const c = await library();
    const handle = await c.delegations.delegate({ task: "have a sub-agent write a marker" });
    const parent = handle.sessions[0]!;
    await waitFor(async () => (await c.delegations.get(handle.id)).status === "input_required", "the sub-agent's permission");
    const stopped = await c.delegations.cancel(handle.id);

    const rec = await recorded(parent, from);
    expect(rec.outcomes).toEqual(["session.execution.interrupted", "session.execution.interrupted"]);
    expect(rec.childTools).toEqual([["shell", "error"]]);
    expect(rec.childLast).toMatchObject({ finish: "error", error: { type: "aborted" } });
    expect(rec.running).toEqual([]);
    expect(rec.permissions).toEqual([]);
    expect(await c.pending({ sessionId: parent })).toEqual([]);

    const turn = expectedTurn(rec);
    expect(stopped).toMatchObject({ status: "cancelled", result: turn });
    const fresh = await library();
    expect(await fresh.result(parent)).toMatchObject({ state: "idle", last: turn });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(existsSync(join(v2.server.directory, "cancelled.txt"))).toBe(false);
  });

  it("the same through an interrupt of the delegated session (oc_interrupt)", async () => {
    v2.server.model.queue(subagentCall("write another"), toolCall("shell", { command: "echo child > interrupted.txt" }));
    const from = v2.log.events.length;
    const c = await library();
    const r = await c.delegate({ task: "have a sub-agent write another marker", timeoutMs: 60_000 });
    expect(r).toMatchObject({ status: "blocked", pending: [expect.objectContaining({ kind: "permission", permission: "shell" })] });

    const stopped = await c.interrupt(r.sessionId);
    const rec = await recorded(r.sessionId, from);
    expect(r.pending![0]!.sessionId).toBe(rec.child.id);
    expect(rec.outcomes).toEqual(["session.execution.interrupted", "session.execution.interrupted"]);
    expect(rec.running).toEqual([]);
    expect(rec.permissions).toEqual([]);
    expect(stopped).toMatchObject({ wasRunning: true, ...expectedTurn(rec) });
    expect(stopped.pending).toBeUndefined();
    await new Promise((r) => setTimeout(r, 1_000));
    expect(existsSync(join(v2.server.directory, "interrupted.txt"))).toBe(false);
  });
});
