// TurnWatch fed by a fake hub and a fake client: which idles end a turn (docs/opencode-behaviour.md §2: error turns
// idle twice, aborting an idle session idles too, a reconnect loses events). `wait({timeoutMs: 0})`
// answers once the checks triggered so far have run, so no test sleeps.
import { describe, expect, it } from "vitest";
import type { OpencodeClient } from "../../../src/client/connect.js";
import type { EventSource, HubErrorListener, HubEvent, HubListener } from "../../../src/core/event-hub.js";
import type { SessionMessage } from "../../../src/core/summary.js";
import { TurnWatch } from "../../../src/core/turn-watch.js";

const S = "ses_a";
let clock = 1_000_000;

function user(id: string): SessionMessage {
  return { info: { id, sessionID: S, role: "user", time: { created: clock++ }, agent: "build", model: { providerID: "fake", modelID: "scripted" } }, parts: [] } as unknown as SessionMessage;
}

function assistant(id: string, parentID: string, o: { done?: boolean; error?: string } = {}): SessionMessage {
  const info = {
    id,
    sessionID: S,
    role: "assistant",
    parentID,
    time: { created: clock++, ...(o.done || o.error ? { completed: clock } : {}) },
    ...(o.error ? { error: { name: o.error, data: { message: o.error } } } : {}),
  };
  return { info, parts: [] } as unknown as SessionMessage;
}

function fakes(state: { messages: SessionMessage[]; status?: Record<string, unknown>; permissions?: unknown[] }) {
  const listeners = new Map<HubListener, HubErrorListener | undefined>();
  const calls: string[] = [];
  const client = {
    directory: "/p",
    async call(id: string, args?: { query?: { limit?: number } }) {
      calls.push(id);
      if (id === "session.status") return state.status ?? {};
      if (id === "session.messages") return args?.query?.limit ? state.messages.slice(-args.query.limit) : state.messages;
      if (id === "permission.list") return state.permissions ?? [];
      if (id === "question.list") return [];
      throw new Error(`unexpected call ${id}`);
    },
  } as unknown as OpencodeClient;
  const hub: EventSource = {
    async subscribe(listener, onError) {
      listeners.set(listener, onError);
      return () => listeners.delete(listener);
    },
  };
  const emit = (type: string, properties: Record<string, unknown> = {}) => {
    for (const l of [...listeners.keys()]) l({ type, properties } as unknown as HubEvent);
  };
  const idle = () => {
    emit("session.status", { sessionID: S, status: { type: "idle" } });
    emit("session.idle", { sessionID: S });
  };
  const fail = (error: Error) => [...listeners.values()].forEach((onError) => onError?.(error));
  return { client, hub, emit, idle, fail, calls, messageReads: () => calls.filter((c) => c === "session.messages").length };
}

const now = (watch: TurnWatch) => watch.wait({ timeoutMs: 0 });

describe("TurnWatch", () => {
  it("ends a turn at an idle once the messages show the reply to our prompt", async () => {
    const state = { messages: [user("msg_01"), assistant("msg_02", "msg_01", { done: true })] };
    const f = fakes(state);
    const watch = await TurnWatch.start(f.client, f.hub, S);
    watch.prompted("msg_02");
    f.emit("session.status", { sessionID: S, status: { type: "busy" } });
    expect(await now(watch)).toBe("timeout");

    state.messages.push(user("msg_03"), assistant("msg_04", "msg_03", { done: true }));
    f.idle();
    expect(await now(watch)).toBe("idle");
    expect(watch.messages?.at(-1)?.info.id).toBe("msg_04");
    // status idle + session.idle: one read of the messages.
    expect(f.messageReads()).toBe(1);
  });

  it("ends a turn it prompted from the events alone, without reading the messages", async () => {
    const f = fakes({ messages: [] });
    const watch = await TurnWatch.start(f.client, f.hub, S);
    watch.prompted();
    const u = user("msg_01");
    const a = assistant("msg_02", "msg_01", { done: true });
    f.emit("message.updated", { sessionID: S, info: u.info });
    f.emit("message.part.updated", { sessionID: S, part: { id: "prt_1", sessionID: S, messageID: "msg_01", type: "text", text: "hi" } });
    f.emit("message.updated", { sessionID: S, info: a.info });
    f.emit("message.part.updated", { sessionID: S, part: { id: "prt_3", sessionID: S, messageID: "msg_02", type: "text", text: "answer" } });
    f.emit("message.part.updated", { sessionID: S, part: { id: "prt_2", sessionID: S, messageID: "msg_02", type: "step-start" } });
    f.idle();
    expect(await now(watch)).toBe("idle");
    expect(f.messageReads()).toBe(0);
    expect(watch.messages?.map((m) => [m.info.id, m.parts.map((p) => p.id)])).toEqual([
      ["msg_01", ["prt_1"]],
      ["msg_02", ["prt_2", "prt_3"]],
    ]);
  });

  it("reads the messages after an error, which reaches the message only after the first idle", async () => {
    const state = { messages: [user("msg_01"), assistant("msg_02", "msg_01", { error: "APIError" })] };
    const f = fakes(state);
    const watch = await TurnWatch.start(f.client, f.hub, S);
    watch.prompted();
    f.emit("message.updated", { sessionID: S, info: state.messages[0]!.info });
    f.emit("message.updated", { sessionID: S, info: assistant("msg_02", "msg_01").info });
    f.emit("session.error", { sessionID: S, error: { name: "APIError", data: { message: "Bad request" } } });
    f.idle();
    expect(await now(watch)).toBe("idle");
    expect(f.messageReads()).toBe(1);
    expect(watch.messages?.at(-1)?.info).toMatchObject({ error: { name: "APIError" } });
  });

  it("confirms an idle without busy from the messages (a fast turn, or no busy seen)", async () => {
    const state = { messages: [user("msg_01"), assistant("msg_02", "msg_01", { done: true })] };
    const f = fakes(state);
    const watch = await TurnWatch.start(f.client, f.hub, S);
    watch.prompted();
    f.idle();
    expect(await now(watch)).toBe("idle");
  });

  it("ignores the second idle of an error turn, also when the next prompt follows at once", async () => {
    const state = { messages: [user("msg_01"), assistant("msg_02", "msg_01", { error: "APIError" })] };
    const f = fakes(state);
    const first = await TurnWatch.start(f.client, f.hub, S);
    first.prompted();
    f.emit("session.error", { sessionID: S, error: { name: "APIError", data: { message: "Bad request" } } });
    f.idle();
    expect(await now(first)).toBe("idle");
    expect(first.sessionError?.name).toBe("APIError");

    const next = await TurnWatch.start(f.client, f.hub, S);
    next.prompted("msg_02");
    state.messages.push(user("msg_03"));
    f.idle(); // the error turn's second idle
    expect(await now(first)).toBe("idle");
    expect(await now(next)).toBe("timeout");
    expect(f.messageReads()).toBe(2); // the first watch did not look again
  });

  it("does not take the idle of an abort of the idle session for the end of our queued turn", async () => {
    const state = { messages: [user("msg_01"), assistant("msg_02", "msg_01")] };
    const f = fakes(state);
    const watch = await TurnWatch.start(f.client, f.hub, S);
    watch.prompted("msg_02"); // queued behind the running turn
    state.messages.push(user("msg_03"));
    f.emit("session.status", { sessionID: S, status: { type: "busy" } });
    state.messages[1] = assistant("msg_02", "msg_01", { done: true });
    f.idle(); // someone aborted: the running turn stops, ours never ran
    expect(await now(watch)).toBe("timeout");
    state.messages.push(assistant("msg_04", "msg_03", { done: true }));
    f.idle();
    expect(await now(watch)).toBe("idle");
  });

  it("ends on an error that left no reply (unknown model)", async () => {
    const state = { messages: [user("msg_01")] };
    const f = fakes(state);
    const watch = await TurnWatch.start(f.client, f.hub, S);
    watch.prompted();
    f.emit("session.error", { sessionID: S, error: { name: "UnknownError", data: { message: "Model not found: fake/nope." } } });
    f.idle();
    expect(await now(watch)).toBe("idle");
    expect(watch.sessionError).toEqual({ name: "UnknownError", data: { message: "Model not found: fake/nope." } });
  });

  it("re-reads the status after a reconnect: an end missed while disconnected is found", async () => {
    const state = { messages: [user("msg_01")], status: { [S]: { type: "busy" } } as Record<string, unknown> };
    const f = fakes(state);
    const watch = await TurnWatch.start(f.client, f.hub, S);
    watch.prompted();
    f.emit("conductor.reconnected", { attempt: 1, downtimeMs: 500 });
    expect(await now(watch)).toBe("timeout"); // still busy
    state.status = {};
    state.messages.push(assistant("msg_02", "msg_01", { done: true }));
    f.emit("conductor.reconnected", { attempt: 1, downtimeMs: 500 });
    expect(await now(watch)).toBe("idle");
  });

  it("attaches to a session it did not prompt: idle with a finished turn ends at once, busy waits", async () => {
    const done = fakes({ messages: [user("msg_01"), assistant("msg_02", "msg_01", { done: true })] });
    expect(await now(await TurnWatch.start(done.client, done.hub, S))).toBe("idle");

    const busy = fakes({ messages: [user("msg_01")], status: { [S]: { type: "retry", attempt: 2, message: "Rate limit", next: 5 } } });
    const watch = await TurnWatch.start(busy.client, busy.hub, S);
    expect(await now(watch)).toBe("timeout");
    expect(watch.retry).toEqual({ attempt: 2, message: "Rate limit", next: 5 });
  });

  it("attaching right after someone prompted (not busy yet) waits for the turn", async () => {
    const state = { messages: [{ ...user("msg_01"), info: { ...user("msg_01").info, time: { created: Date.now() } } } as SessionMessage] };
    const f = fakes(state);
    const watch = await TurnWatch.start(f.client, f.hub, S);
    expect(await now(watch)).toBe("timeout");
    f.emit("session.status", { sessionID: S, status: { type: "busy" } });
    state.messages.push(assistant("msg_02", "msg_01", { done: true }));
    f.idle();
    expect(await now(watch)).toBe("idle");
    watch.close();
  });

  it("returns blocked while a permission of a sub-agent waits, and goes on once it is answered", async () => {
    const asked = { id: "per_1", sessionID: "ses_child", permission: "bash", patterns: ["ls"], metadata: {}, always: ["ls *"] };
    const state = { messages: [user("msg_01")], permissions: [asked] };
    const f = fakes(state);
    const watch = await TurnWatch.start(f.client, f.hub, S);
    watch.prompted();
    f.emit("session.created", { info: { id: "ses_child", parentID: S } });
    f.emit("permission.asked", asked);
    expect(await now(watch)).toBe("blocked");
    expect([...watch.pending.values()]).toEqual([{ kind: "permission", id: "per_1", sessionId: "ses_child", permission: "bash", patterns: ["ls"], always: ["ls *"], metadata: {} }]);
    // Answered, but its reply event is not here yet: the next wait asks the server.
    state.permissions = [];
    expect(await now(watch)).toBe("timeout");
    expect(watch.pending.size).toBe(0);
  });

  it("fails the wait when the event stream is gone for good", async () => {
    const f = fakes({ messages: [user("msg_01")] });
    const watch = await TurnWatch.start(f.client, f.hub, S);
    watch.prompted();
    const waiting = watch.wait();
    f.fail(new Error("stream closed"));
    await expect(waiting).rejects.toThrow("stream closed");
  });
});
