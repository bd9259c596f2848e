// Session functions against a fake fetch answering with shapes seen from opencode 1.18.33
// (docs/opencode-behaviour.md §2, §6, §7; paging cursor from a probe of GET /session/{id}/message?limit=).
import { describe, expect, it } from "vitest";
import { connect } from "../../../src/client/index.js";
import { NotFoundError } from "../../../src/client/errors.js";
import type { CoreContext, CoreSettings } from "../../../src/core/context.js";
import { UsageError } from "../../../src/core/errors.js";
import type { EventHub } from "../../../src/core/event-hub.js";
import { abortSession, compactSession, deleteSession, shellInSession } from "../../../src/core/sessions/actions.js";
import { listSessions } from "../../../src/core/sessions/rows.js";
import { sessionDiff } from "../../../src/core/sessions/diff.js";
import { sessionInfo } from "../../../src/core/sessions/info.js";
import { V1Engine } from "../../../src/core/engine/v1.js";
import { sessionMessages } from "../../../src/core/sessions/messages.js";

interface Seen {
  method: string;
  path: string;
  query: Record<string, string>;
  body?: unknown;
}
type Handler = (seen: Seen) => unknown;

const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);

function session(id: string, extra: Record<string, unknown> = {}) {
  return { id, slug: "s", projectID: "p", directory: "/work/project", title: `title ${id}`, version: "1.18.33", time: { created: T0, updated: T0 }, ...extra };
}

function user(id: string, created: number, parts: unknown[] = [{ type: "text", text: `prompt ${id}` }], modelID = "scripted") {
  return {
    info: { id, sessionID: "ses_a", role: "user", time: { created }, agent: "build", model: { providerID: "fake", modelID } },
    parts: parts.map((p, i) => ({ id: `prt_${id}_${i}`, sessionID: "ses_a", messageID: id, ...(p as object) })),
  };
}

function assistant(id: string, parentID: string, created: number, parts: unknown[], error?: unknown) {
  return {
    info: {
      id,
      sessionID: "ses_a",
      role: "assistant",
      time: { created, completed: created + 1 },
      parentID,
      modelID: "scripted",
      providerID: "fake",
      mode: "build",
      agent: "build",
      path: { cwd: "/work/project", root: "/work/project" },
      cost: 0,
      tokens: { input: 1, output: 1, reasoning: 0, cache: { read: 0, write: 0 } },
      ...(error ? { error } : {}),
    },
    parts: parts.map((p, i) => ({ id: `prt_${id}_${i}`, sessionID: "ses_a", messageID: id, ...(p as object) })),
  };
}

const writeTool = {
  type: "tool",
  callID: "call_1",
  tool: "write",
  state: {
    status: "completed",
    input: { filePath: "/work/project/a.txt" },
    output: "Wrote file successfully.",
    title: "a.txt",
    metadata: {},
    time: { start: 1, end: 2 },
  },
};

/** Oldest first, as opencode returns them. */
const history = [
  user("msg_u1", T0 + 1),
  assistant("msg_a1", "msg_u1", T0 + 2, [writeTool]),
  assistant("msg_a2", "msg_u1", T0 + 3, [{ type: "text", text: "done" }]),
  user("msg_u2", T0 + 4),
  assistant("msg_a3", "msg_u2", T0 + 5, [{ type: "text", text: "second" }]),
  user("msg_u3", T0 + 6, [{ type: "compaction", auto: false }]),
  assistant("msg_a4", "msg_u3", T0 + 7, [{ type: "text", text: "summary" }]),
];

/** Pages like opencode: the newest `limit` before the cursor, with X-Next-Cursor when older ones exist. */
function pagedMessages(all: unknown[]): (seen: Seen) => Response {
  return ({ query }) => {
    const end = query.before ? Number(Buffer.from(query.before, "base64").toString()) : all.length;
    const limit = query.limit ? Number(query.limit) : end;
    const start = Math.max(0, end - limit);
    const headers: Record<string, string> = start > 0 ? { "x-next-cursor": Buffer.from(String(start)).toString("base64") } : {};
    return Response.json(all.slice(start, end), { headers });
  };
}

function fakeContext(routes: Record<string, unknown | Handler>, settings: CoreSettings = {}) {
  const seen: Seen[] = [];
  const client = connect({
    url: "http://127.0.0.1:1",
    directory: "/work/project",
    fetch: async (request) => {
      const url = new URL(request.url);
      const text = await request.text();
      const entry: Seen = {
        method: request.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        ...(text ? { body: JSON.parse(text) } : {}),
      };
      seen.push(entry);
      const route = routes[`${request.method} ${url.pathname}`];
      if (route === undefined)
        return Response.json({ name: "UnknownError", data: { message: `no fake route for ${request.method} ${url.pathname}` } }, { status: 500 });
      const out = typeof route === "function" ? (route as Handler)(entry) : route;
      return out instanceof Response ? out : Response.json(out);
    },
  });
  // TurnWatch only subscribes; the fake server sends no events, status reads decide.
  const hub = { subscribe: async () => () => undefined } as unknown as EventHub;
  const ctx: CoreContext = { engine: new V1Engine(client), client, hub, settings };
  return { ctx, seen, calls: (method: string, path: string) => seen.filter((s) => s.method === method && s.path === path) };
}

describe("listSessions", () => {
  it("lists newest first with search and a default limit of 50", async () => {
    const older = session("ses_old", { time: { created: T0, updated: T0 } });
    const newer = session("ses_new", { time: { created: T0, updated: T0 + 5000, archived: T0 + 6000 }, parentID: "ses_old" });
    const { ctx, calls } = fakeContext({ "GET /session": [older, newer] });
    const rows = await listSessions(ctx, { search: " title " });
    expect(rows).toEqual([
      {
        id: "ses_new",
        title: "title ses_new",
        directory: "/work/project",
        parentId: "ses_old",
        created: new Date(T0).toISOString(),
        updated: new Date(T0 + 5000).toISOString(),
        archived: new Date(T0 + 6000).toISOString(),
      },
      { id: "ses_old", title: "title ses_old", directory: "/work/project", created: new Date(T0).toISOString(), updated: new Date(T0).toISOString() },
    ]);
    expect(calls("GET", "/session")[0]!.query).toEqual({ limit: "50", search: "title", directory: "/work/project" });
  });

  it("lists the children of a session, filtered by search, in another directory", async () => {
    const { ctx, calls } = fakeContext({
      "GET /session/ses_p/children": [session("ses_c1", { title: "Explore repo" }), session("ses_c2", { title: "Write tests" })],
    });
    expect((await listSessions(ctx, { parentId: "ses_p", search: "TEST", directory: "/elsewhere" })).map((r) => r.id)).toEqual(["ses_c2"]);
    expect(calls("GET", "/session/ses_p/children")[0]!.query.directory).toBe("/elsewhere");
  });

  it("rejects a bad limit or id before calling opencode", async () => {
    const { ctx, seen } = fakeContext({});
    await expect(listSessions(ctx, { limit: 0 })).rejects.toBeInstanceOf(UsageError);
    await expect(listSessions(ctx, { parentId: "nope" })).rejects.toThrow(/starting with "ses_"/);
    await expect(sessionInfo(ctx, "nope")).rejects.toBeInstanceOf(UsageError);
    expect(seen).toEqual([]);
  });
});

describe("sessionInfo", () => {
  const routes = (status: unknown) => ({
    "GET /session/ses_a": session("ses_a", { directory: "/other", model: { id: "scripted", providerID: "fake", variant: "default" }, agent: "build", cost: 0 }),
    "GET /session/status": status,
  });

  it("reads the status from the session's own directory: absent means idle", async () => {
    const { ctx, calls } = fakeContext(routes({}));
    const info = await sessionInfo(ctx, "ses_a");
    expect(info).toMatchObject({ id: "ses_a", directory: "/other", status: "idle", model: "fake/scripted", agent: "build" });
    expect(calls("GET", "/session/status")[0]!.query.directory).toBe("/other");
  });

  it("reports busy and retry", async () => {
    expect((await sessionInfo(fakeContext(routes({ ses_a: { type: "busy" } })).ctx, "ses_a")).status).toBe("busy");
    const retry = await sessionInfo(fakeContext(routes({ ses_a: { type: "retry", attempt: 2, message: "Rate limit exceeded", next: T0 } })).ctx, "ses_a");
    expect(retry).toMatchObject({ status: "retry", retry: { attempt: 2, message: "Rate limit exceeded", nextAt: new Date(T0).toISOString() } });
  });

  it("passes opencode's NotFoundError through", async () => {
    const { ctx } = fakeContext({
      "GET /session/ses_gone": new Response(JSON.stringify({ name: "NotFoundError", data: { message: "Session not found: ses_gone" } }), { status: 404 }),
    });
    await expect(sessionInfo(ctx, "ses_gone")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("sessionMessages", () => {
  it("pages from the newest with opencode's cursor, compacting each message", async () => {
    const { ctx, calls } = fakeContext({ "GET /session/ses_a/message": pagedMessages(history) });
    const first = await sessionMessages(ctx, "ses_a", { limit: 3 });
    expect(first.messages.map((m) => m.id)).toEqual(["msg_a3", "msg_u3", "msg_a4"]);
    expect(first.nextBefore).toBeDefined();
    const second = await sessionMessages(ctx, "ses_a", { limit: 3, before: first.nextBefore });
    expect(second.messages).toEqual([
      { id: "msg_a1", role: "assistant", time: new Date(T0 + 2).toISOString(), model: "fake/scripted", tools: ["write"] },
      { id: "msg_a2", role: "assistant", time: new Date(T0 + 3).toISOString(), model: "fake/scripted", text: "done" },
      { id: "msg_u2", role: "user", time: new Date(T0 + 4).toISOString(), model: "fake/scripted", text: "prompt msg_u2" },
    ]);
    const third = await sessionMessages(ctx, "ses_a", { limit: 3, before: second.nextBefore });
    expect(third.messages.map((m) => m.id)).toEqual(["msg_u1"]);
    expect(third.nextBefore).toBeUndefined();
    expect(calls("GET", "/session/ses_a/message")[1]!.query).toMatchObject({ limit: "3", before: first.nextBefore, directory: "/work/project" });
  });

  it("shows an assistant error", async () => {
    const failed = assistant("msg_ax", "msg_u1", T0 + 9, [], {
      name: "APIError",
      data: { message: "Rate limit exceeded", statusCode: 429, isRetryable: true },
    });
    const { ctx } = fakeContext({ "GET /session/ses_a/message": pagedMessages([history[0], failed]) });
    expect((await sessionMessages(ctx, "ses_a")).messages[1]).toMatchObject({ id: "msg_ax", error: { name: "APIError", message: "Rate limit exceeded" } });
  });
});

describe("sessionDiff", () => {
  const diff = [{ file: "a.txt", patch: "Index: a.txt\n+x", additions: 1, deletions: 0, status: "added" }];

  it("defaults to the last user message that started a turn (not a compaction), across pages", async () => {
    const { ctx, calls } = fakeContext({
      "GET /session/ses_a/message": pagedMessages([...history, ...Array.from({ length: 25 }, (_, i) => assistant(`msg_z${i}`, "msg_u3", T0 + 10 + i, []))]),
      "GET /session/ses_a/diff": diff,
    });
    const result = await sessionDiff(ctx, "ses_a");
    expect(result).toEqual({
      sessionId: "ses_a",
      messageId: "msg_u2",
      files: [{ file: "a.txt", status: "added", additions: 1, deletions: 0, patch: "Index: a.txt\n+x" }],
    });
    expect(calls("GET", "/session/ses_a/diff")[0]!.query.messageID).toBe("msg_u2");
    expect(calls("GET", "/session/ses_a/message").length).toBe(2);
  });

  it("uses the given message id without reading messages", async () => {
    const { ctx, calls } = fakeContext({ "GET /session/ses_a/diff": diff });
    await sessionDiff(ctx, "ses_a", { messageId: "msg_u1" });
    expect(calls("GET", "/session/ses_a/diff")[0]!.query.messageID).toBe("msg_u1");
    expect(calls("GET", "/session/ses_a/message")).toEqual([]);
  });

  it("is empty for a session without user messages", async () => {
    const { ctx, calls } = fakeContext({ "GET /session/ses_a/message": pagedMessages([]) });
    expect(await sessionDiff(ctx, "ses_a")).toEqual({ sessionId: "ses_a", files: [] });
    expect(calls("GET", "/session/ses_a/diff")).toEqual([]);
  });
});

describe("compactSession", () => {
  const providers = {
    providers: [
      {
        id: "fake",
        name: "Fake",
        source: "config",
        env: [],
        options: {},
        models: { scripted: { id: "scripted", name: "Scripted" }, backup: { id: "backup", name: "Backup" } },
      },
    ],
    default: { fake: "scripted" },
  };

  it("summarizes with the model of the last user message by default", async () => {
    const messages = [user("msg_u1", T0, undefined, "backup"), assistant("msg_a1", "msg_u1", T0 + 1, [{ type: "text", text: "ok" }])];
    const { ctx, calls } = fakeContext({ "GET /session/ses_a/message": pagedMessages(messages), "POST /session/ses_a/summarize": true });
    expect(await compactSession(ctx, "ses_a")).toEqual({ sessionId: "ses_a", model: "fake/backup", compacted: true });
    expect(calls("POST", "/session/ses_a/summarize")[0]!.body).toEqual({ providerID: "fake", modelID: "backup" });
  });

  it("resolves a given model name, and refuses a blocked one", async () => {
    const { ctx, calls } = fakeContext({ "GET /config/providers": providers, "POST /session/ses_a/summarize": true });
    expect((await compactSession(ctx, "ses_a", { model: "script" })).model).toBe("fake/scripted");
    expect(calls("POST", "/session/ses_a/summarize")[0]!.body).toEqual({ providerID: "fake", modelID: "scripted" });
    const blocked = fakeContext(
      { "GET /config/providers": providers, "GET /session/ses_a/message": pagedMessages([user("msg_u1", T0)]) },
      { modelBlock: ["fake/scripted"] },
    );
    await expect(compactSession(blocked.ctx, "ses_a", { model: "fake/scripted" })).rejects.toThrow(/blocked by the modelBlock rule "fake\/scripted"/);
    await expect(compactSession(blocked.ctx, "ses_a")).rejects.toThrow(/Pass another `model`/);
  });
});

describe("shellInSession", () => {
  it("returns the command's output from the returned parts", async () => {
    const reply = assistant("msg_sh", "msg_u9", T0, [
      {
        type: "tool",
        callID: "x",
        tool: "bash",
        state: { status: "completed", input: { command: "echo hi" }, output: "hi\n", title: "", metadata: { output: "hi\n" }, time: { start: 1, end: 2 } },
      },
    ]);
    const { ctx, calls } = fakeContext({ "POST /session/ses_a/shell": reply });
    expect(await shellInSession(ctx, "ses_a", { command: "echo hi" })).toEqual({ sessionId: "ses_a", messageId: "msg_sh", output: "hi" });
    expect(calls("POST", "/session/ses_a/shell")[0]!.body).toEqual({ command: "echo hi", agent: "build" });
    await expect(shellInSession(ctx, "ses_a", { command: "  " })).rejects.toBeInstanceOf(UsageError);
  });
});

describe("abort and delete", () => {
  it("aborts a busy session before deleting it", async () => {
    let busy = true;
    const { ctx, seen } = fakeContext({
      "GET /session/ses_a": session("ses_a"),
      "GET /session/status": () => (busy ? { ses_a: { type: "busy" } } : {}),
      "POST /session/ses_a/abort": () => {
        busy = false;
        return true;
      },
      "GET /session/ses_a/message": [],
      "DELETE /session/ses_a": true,
    });
    expect(await deleteSession(ctx, "ses_a")).toEqual({ sessionId: "ses_a", deleted: true, aborted: true });
    const order = seen.map((s) => `${s.method} ${s.path}`).filter((k) => k.includes("abort") || k.startsWith("DELETE"));
    expect(order).toEqual(["POST /session/ses_a/abort", "DELETE /session/ses_a"]);
  });

  it("deletes an idle session without aborting it", async () => {
    const { ctx, calls } = fakeContext({ "GET /session/ses_a": session("ses_a"), "GET /session/status": {}, "DELETE /session/ses_a": true });
    expect(await deleteSession(ctx, "ses_a")).toEqual({ sessionId: "ses_a", deleted: true, aborted: false });
    expect(calls("POST", "/session/ses_a/abort")).toEqual([]);
  });

  it("abort says whether a turn was running", async () => {
    const { ctx, calls } = fakeContext({
      "GET /session/ses_a": session("ses_a"),
      "GET /session/status": { ses_a: { type: "retry", attempt: 1, message: "x", next: T0 } },
      "POST /session/ses_a/abort": true,
    });
    expect(await abortSession(ctx, "ses_a")).toEqual({ sessionId: "ses_a", wasRunning: true });
    expect(calls("POST", "/session/ses_a/abort")).toHaveLength(1);
  });
});
