// Session functions on the fake opencode replaying the "session-history" recording
// (`npm run record -- session-history`): opencode 1.18.33's own answers for a session with a failed
// turn, a text turn, a file-writing turn on another model, a compaction and a shell command, and a
// child session. Expected values come from the recording; the session functions made its reads.
import { describe, expect, it } from "vitest";
import { NotFoundError } from "../../../src/client/errors.js";
import type { CoreContext, CoreSettings } from "../../../src/core/context.js";
import { UsageError } from "../../../src/core/errors.js";
import type { EventHub } from "../../../src/core/event-hub.js";
import { compactSession, shellInSession } from "../../../src/core/sessions/actions.js";
import { listSessions } from "../../../src/core/sessions/rows.js";
import { sessionDiff } from "../../../src/core/sessions/diff.js";
import { sessionInfo } from "../../../src/core/sessions/info.js";
import { V1Engine } from "../../../src/core/engine/v1/v1-engine.js";
import { sessionMessages } from "../../../src/core/sessions/messages.js";
import { MISSING_SESSION } from "../../support/recording/scenarios.js";
import { useReplay } from "../../support/replay.js";
import { recordedMessages } from "../../support/tool-replay.js";

// How often a function reads is the code's business; repeated reads get opencode's last answer.
const replay = useReplay("session-history", { repeatReads: true });
const SESSION = "ses_0001";
const CHILD = "ses_0002";
const iso = (ms: number) => new Date(ms).toISOString();

/** What opencode recorded of the session before the compaction (the first full read). */
const history = () =>
  recordedMessages({ ...replay.fixture, interactions: replay.fixture.interactions.filter((i) => i.query.limit === "20").slice(0, 1) }, SESSION);

function fakeContext(settings: CoreSettings = {}) {
  const { client, seen } = replay.connectSeen();
  // The hub only subscribes: the recording has no events for these reads, so the reads decide.
  const hub = { subscribe: async () => () => undefined } as unknown as EventHub;
  const ctx: CoreContext = { engine: new V1Engine(client), hub, settings };
  return { ctx, seen, calls: (method: string, path: string) => seen.filter((s) => s.method === method && s.path === path) };
}

describe("the recording", () => {
  it("holds enough messages for three pages of three", () => {
    expect(history().length).toBe(7);
  });
});

describe("listSessions", () => {
  it("lists with search and a default limit of 50", async () => {
    const { ctx, calls } = fakeContext();
    const recorded = replay.fixture.interactions.find((i) => i.path === "/session" && i.method === "GET")!.body as Array<{
      time: { created: number; updated: number };
    }>;
    expect(await listSessions(ctx, { search: " history " })).toEqual([
      { id: SESSION, title: "history", directory: "/project", created: iso(recorded[0]!.time.created), updated: iso(recorded[0]!.time.updated) },
    ]);
    expect(calls("GET", "/session")[0]!.query).toEqual({ limit: "50", search: "history", directory: "/project" });
  });

  it("lists the children of a session, filtered by search", async () => {
    const { ctx } = fakeContext();
    expect(await listSessions(ctx, { parentId: SESSION, search: "TEST" })).toMatchObject([{ id: CHILD, title: "Write tests", parentId: SESSION }]);
  });

  it("rejects a bad limit or id before calling opencode", async () => {
    const { ctx, seen } = fakeContext();
    await expect(listSessions(ctx, { limit: 0 })).rejects.toBeInstanceOf(UsageError);
    await expect(listSessions(ctx, { parentId: "nope" })).rejects.toThrow(/starting with "ses_"/);
    await expect(sessionInfo(ctx, "nope")).rejects.toBeInstanceOf(UsageError);
    expect(seen).toEqual([]);
  });
});

describe("sessionInfo", () => {
  it("reads the status from the session's own directory: absent means idle", async () => {
    const { ctx, calls } = fakeContext();
    expect(await sessionInfo(ctx, SESSION)).toMatchObject({ id: SESSION, directory: "/project", status: "idle", model: "fake/backup", agent: "build" });
    expect(calls("GET", "/session/status")[0]!.query.directory).toBe("/project");
  });

  it("passes opencode's NotFoundError through", async () => {
    await expect(sessionInfo(fakeContext().ctx, MISSING_SESSION)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("sessionMessages", () => {
  it("pages from the newest with opencode's cursor, compacting each message", async () => {
    const { ctx, calls } = fakeContext();
    const ids = history().map((m) => m.info.id);
    const first = await sessionMessages(ctx, SESSION, { limit: 3 });
    expect(first.messages.map((m) => m.id)).toEqual(ids.slice(4, 7));
    expect(first.nextBefore).toBeDefined();
    const second = await sessionMessages(ctx, SESSION, { limit: 3, before: first.nextBefore });
    const [failed, prompt, answer] = history()
      .slice(1, 4)
      .map((m) => m.info);
    expect(second.messages).toEqual([
      { id: failed!.id, role: "assistant", time: iso(failed!.time.created), model: "fake/scripted", error: expect.objectContaining({ name: "APIError" }) },
      { id: prompt!.id, role: "user", time: iso(prompt!.time.created), model: "fake/scripted", text: "answer" },
      { id: answer!.id, role: "assistant", time: iso(answer!.time.created), model: "fake/scripted", text: "second" },
    ]);
    const third = await sessionMessages(ctx, SESSION, { limit: 3, before: second.nextBefore });
    expect(third.messages.map((m) => m.id)).toEqual(ids.slice(0, 1));
    expect(third.nextBefore).toBeUndefined();
    expect(calls("GET", `/session/${SESSION}/message`)[1]!.query).toMatchObject({ limit: "3", before: first.nextBefore, directory: "/project" });
  });

  it("shows an assistant error and the tools a message called", async () => {
    const { messages } = await sessionMessages(fakeContext().ctx, SESSION);
    expect(messages[1]).toMatchObject({ role: "assistant", error: { name: "APIError", message: "Bad request" } });
    expect(messages[5]).toMatchObject({ role: "assistant", model: "fake/backup", tools: ["write"] });
  });
});

describe("sessionDiff", () => {
  it("defaults to the last user message that started a turn, also after a compaction", async () => {
    const { ctx, calls } = fakeContext();
    const writeTurn = history()[4]!.info.id;
    const expected = {
      sessionId: SESSION,
      messageId: writeTurn,
      files: [{ file: "a.txt", status: "added", additions: 1, deletions: 0, patch: expect.stringContaining("+x") }],
    };
    expect(await sessionDiff(ctx, SESSION)).toEqual(expected);
    expect(calls("GET", `/session/${SESSION}/diff`)[0]!.query.messageID).toBe(writeTurn);
    // The compaction adds a user message (a compaction part) that started no turn of the caller's.
    await compactSession(ctx, SESSION);
    expect(await sessionDiff(ctx, SESSION)).toEqual(expected);
  });

  it("uses the given message id: a turn that changed nothing has no files", async () => {
    const { ctx, calls } = fakeContext();
    const failedTurn = history()[0]!.info.id;
    expect(await sessionDiff(ctx, SESSION, { messageId: failedTurn })).toEqual({ sessionId: SESSION, messageId: failedTurn, files: [] });
    expect(calls("GET", `/session/${SESSION}/diff`)[0]!.query.messageID).toBe(failedTurn);
  });

  it("is empty for a session without user messages", async () => {
    const { ctx, calls } = fakeContext();
    expect(await sessionDiff(ctx, CHILD)).toEqual({ sessionId: CHILD, files: [] });
    expect(calls("GET", `/session/${CHILD}/diff`)).toEqual([]);
  });
});

describe("compactSession", () => {
  it("summarizes with the model of the last user message by default", async () => {
    const { ctx, calls } = fakeContext();
    expect(await compactSession(ctx, SESSION)).toEqual({ sessionId: SESSION, model: "fake/backup", compacted: true });
    expect(calls("POST", `/session/${SESSION}/summarize`)[0]!.body).toEqual({ providerID: "fake", modelID: "backup" });
  });

  it("resolves a given model name, and refuses a blocked one", async () => {
    const { ctx, calls } = fakeContext();
    await compactSession(ctx, SESSION); // the recorded order: the default compaction came first
    expect((await compactSession(ctx, SESSION, { model: "script" })).model).toBe("fake/scripted");
    expect(calls("POST", `/session/${SESSION}/summarize`)[1]!.body).toEqual({ providerID: "fake", modelID: "scripted" });
    const blocked = fakeContext({ modelBlock: ["fake/backup"] });
    await expect(compactSession(blocked.ctx, SESSION, { model: "fake/backup" })).rejects.toThrow(/blocked by the modelBlock rule "fake\/backup"/);
    await expect(compactSession(blocked.ctx, SESSION)).rejects.toThrow(/Pass another `model`/);
    expect(blocked.calls("POST", `/session/${SESSION}/summarize`)).toEqual([]);
  });
});

describe("shellInSession", () => {
  it("returns the command's output from the returned parts", async () => {
    const { ctx, calls } = fakeContext();
    const shell = replay.fixture.interactions.find((i) => i.path === `/session/${SESSION}/shell`)!.body as { info: { id: string } };
    expect(await shellInSession(ctx, SESSION, { command: "echo hi" })).toEqual({ sessionId: SESSION, messageId: shell.info.id, output: "hi" });
    expect(calls("POST", `/session/${SESSION}/shell`)[0]!.body).toEqual({ command: "echo hi", agent: "build" });
    await expect(shellInSession(ctx, SESSION, { command: "  " })).rejects.toBeInstanceOf(UsageError);
  });
});
