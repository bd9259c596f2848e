// Core session and discovery functions against the real opencode (git project, scripted model).
// One server for the file; each test works on sessions of its own (its own turn, file and model
// script), so none depends on another.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, NotFoundError, type OpencodeClient } from "../../../src/client/index.js";
import type { CoreContext } from "../../../src/core/context.js";
import { catalog, CATALOG_KINDS } from "../../../src/core/catalog/catalogs.js";
import { getProviderCatalog, listModels } from "../../../src/core/catalog/models.js";
import { serverStatus } from "../../../src/core/catalog/status.js";
import { EventHub } from "../../../src/core/event-hub.js";
import { V1Engine } from "../../../src/core/engine/v1/v1-engine.js";
import {
  compactSession,
  deleteSession,
  exportSession,
  forkSession,
  renameSession,
  revertSession,
  sessionTodo,
  shellInSession,
  unrevertSession,
} from "../../../src/core/sessions/actions.js";
import { listSessions } from "../../../src/core/sessions/rows.js";
import { sessionDiff } from "../../../src/core/sessions/diff.js";
import { sessionInfo } from "../../../src/core/sessions/info.js";
import { sessionMessages } from "../../../src/core/sessions/messages.js";
import { TurnWatch } from "../../../src/core/turns/watch.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { SUMMARY_ANSWER, text, toolCall } from "../../support/scripted-model.js";

const SECRET = "sk-test-SECRET";
const MODEL = { providerID: "fake", modelID: "scripted" };

let oc: TestOpencode;
let ctx: CoreContext;
/** The typed 1.x client the tests set sessions up with (the core's verbs use the engine). */
let client: OpencodeClient;

beforeAll(async () => {
  oc = await startOpencode({ gitInit: true, config: { provider: { fake: { options: { apiKey: SECRET, headers: { "X-Custom-Auth": SECRET } } } } } });
  client = connect({ url: oc.url, password: oc.password, directory: oc.directory });
  const engine = new V1Engine(client);
  ctx = { engine, hub: new EventHub(engine), settings: {} };
});

afterAll(async () => {
  ctx?.hub.close();
  await oc?.stop();
});

/** A titled session (no title request) with one turn run to its end: the model writes `name`.txt, then says "done". */
async function workedSession(name: string): Promise<{ sessionId: string; file: string; userMessageId: string }> {
  const file = join(oc.directory, `${name}.txt`);
  const { id } = await client.call("session.create", { body: { title: `core sessions e2e ${name}` } });
  oc.model.forSession(id).queue(toolCall("write", { filePath: file, content: "x" }), text("done"));
  const watch = await TurnWatch.start(ctx.engine, ctx.hub, id);
  try {
    watch.prompted();
    await client.call("session.prompt_async", { path: { sessionID: id }, body: { model: MODEL, parts: [{ type: "text", text: `write ${name}.txt` }] } });
    expect(await watch.wait({ timeoutMs: 60_000 })).toBe("idle");
  } finally {
    watch.close();
  }
  const userMessageId = (await sessionMessages(ctx, id)).messages[0]!.id;
  return { sessionId: id, file, userMessageId };
}

describe("core sessions (e2e)", () => {
  it("shows the turn's messages and its diff (default: the last user message)", async () => {
    const { sessionId, file, userMessageId } = await workedSession("messages");
    expect(existsSync(file)).toBe(true);

    const page = await sessionMessages(ctx, sessionId);
    expect(page.nextBefore).toBeUndefined();
    expect(page.messages[0]).toMatchObject({ id: userMessageId, role: "user", text: "write messages.txt", model: "fake/scripted" });
    expect(page.messages.flatMap((m) => m.tools ?? [])).toEqual(["write"]);
    expect(page.messages.at(-1)).toMatchObject({ role: "assistant", text: "done" });

    const older = await sessionMessages(ctx, sessionId, { limit: 1 });
    expect(older.messages.map((m) => m.text)).toEqual(["done"]);
    const rest = await sessionMessages(ctx, sessionId, { limit: 5, before: older.nextBefore });
    expect(rest.messages.map((m) => m.id)).toEqual(page.messages.slice(0, -1).map((m) => m.id));

    const diff = await sessionDiff(ctx, sessionId);
    expect(diff.messageId).toBe(userMessageId);
    expect(diff.files).toEqual([expect.objectContaining({ file: "messages.txt", status: "added", additions: 1 })]);
    expect((await sessionDiff(ctx, sessionId, { messageId: userMessageId })).files).toHaveLength(1);
  });

  it("reports info, todo and export", async () => {
    const { sessionId } = await workedSession("info");
    expect(await sessionInfo(ctx, sessionId)).toMatchObject({
      id: sessionId,
      title: "core sessions e2e info",
      directory: oc.directory,
      status: "idle",
      model: "fake/scripted",
    });
    expect(await sessionTodo(ctx, sessionId)).toEqual([]);
    const exported = await exportSession(ctx, sessionId);
    expect(exported.session.id).toBe(sessionId);
    expect(exported.messages.map((m) => m.info.role)).toEqual(["user", "assistant", "assistant"]);
    expect(JSON.parse(JSON.stringify(exported))).toEqual(exported);
  });

  it("forks, renames and finds sessions by search", async () => {
    const { sessionId } = await workedSession("fork");
    const fork = await forkSession(ctx, sessionId);
    expect(fork.id).not.toBe(sessionId);
    expect(fork.title).toContain("(fork #1)");
    expect((await exportSession(ctx, fork.id)).messages).toHaveLength(3);

    const renamed = await renameSession(ctx, sessionId, "renamed by core");
    expect(renamed.title).toBe("renamed by core");
    expect((await listSessions(ctx, { search: "renamed by" })).map((s) => s.id)).toEqual([sessionId]);
    expect(await listSessions(ctx, { search: "no-such-title-xyz" })).toEqual([]);
    const all = await listSessions(ctx);
    expect(all.map((s) => s.id)).toEqual(expect.arrayContaining([sessionId, fork.id]));
    // Newest first by `updated`; a rename does not touch `updated` in 1.18.33, so the fork (the newest) leads.
    expect(all[0]!.id).toBe(fork.id);
    expect(all.map((s) => s.updated)).toEqual(
      all
        .map((s) => s.updated)
        .sort()
        .reverse(),
    );
  });

  it("reverts the turn's file and brings it back", async () => {
    const { sessionId, file, userMessageId } = await workedSession("revert");
    const reverted = await revertSession(ctx, sessionId, { messageId: userMessageId });
    expect(reverted.revert?.messageId).toBe(userMessageId);
    expect(existsSync(file)).toBe(false);
    const restored = await unrevertSession(ctx, sessionId);
    expect(restored.revert).toBeUndefined();
    expect(existsSync(file)).toBe(true);
  });

  it("runs a shell command in the session", async () => {
    const { sessionId } = await workedSession("shell");
    const result = await shellInSession(ctx, sessionId, { command: "echo hi" });
    expect(result.output).toBe("hi");
    expect(result.error).toBeUndefined();
  });

  it("compacts with the session's model", async () => {
    const { sessionId } = await workedSession("compact");
    expect(await compactSession(ctx, sessionId)).toEqual({ sessionId, model: "fake/scripted", compacted: true });
    expect(oc.model.requests.filter((r) => r.kind === "summary" && r.sessionId === sessionId)).toHaveLength(1);
    const last = (await sessionMessages(ctx, sessionId, { limit: 1 })).messages[0];
    expect(last?.text).toBe(SUMMARY_ANSWER);
  });

  it("deletes a session; it is gone afterwards", async () => {
    const { sessionId } = await workedSession("delete");
    expect(await deleteSession(ctx, sessionId)).toEqual({ sessionId, deleted: true, aborted: false });
    await expect(sessionInfo(ctx, sessionId)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("aborts a busy session before deleting it, so its model call stops", async () => {
    const { id } = await client.call("session.create", { body: { title: "busy one" } });
    oc.model.forSession(id).queue(text("too late", { delayMs: 60_000 }));
    await client.call("session.prompt_async", { path: { sessionID: id }, body: { model: MODEL, parts: [{ type: "text", text: "slow" }] } });
    const [request] = await oc.model.waitForRequests(1, { sessionId: id, kind: "chat", timeoutMs: 60_000 });
    expect(await deleteSession(ctx, id)).toEqual({ sessionId: id, deleted: true, aborted: true });
    expect((await oc.model.waitForEnd(request!, { timeoutMs: 30_000 })).clientClosed).toBe(true);
    expect((await client.call("session.status"))[id]).toBeUndefined();
  });
});

describe("core discovery (e2e)", () => {
  it("reports the server's status", async () => {
    const status = await serverStatus(ctx);
    expect(status).toMatchObject({ url: oc.url, version: "1.18.33", healthy: true, defaultModel: "fake/scripted" });
    expect(status.counts).toMatchObject({ providers: 1, models: 2 });
    expect(status.counts.agents).toBeGreaterThan(0);
    expect(status.counts.commands).toBeGreaterThan(0);
  });

  it("lists models, with search", async () => {
    const models = await listModels(ctx);
    expect(models.map((m) => m.id)).toEqual(["fake/backup", "fake/scripted"]);
    expect(models[1]).toMatchObject({ name: "Scripted", provider: "fake", capabilities: { toolcall: true } });
    expect((await listModels(ctx, { search: "back" })).map((m) => m.id)).toEqual(["fake/backup"]);
    expect((await listModels(ctx, { freeOnly: true })).length).toBe(2);
  });

  it("answers every catalog, and never shows the provider's secrets", async () => {
    const outputs: unknown[] = [await serverStatus(ctx), await listModels(ctx), await getProviderCatalog(ctx)];
    for (const kind of CATALOG_KINDS) {
      const rows = await catalog(ctx, kind);
      expect(rows, kind).toBeDefined();
      outputs.push(rows);
    }
    expect((await catalog(ctx, "agents")).map((a) => a.name)).toContain("build");
    expect((await catalog(ctx, "tools")).map((t) => t.id)).toContain("bash");
    expect((await catalog(ctx, "providers")).find((p) => p.id === "fake")).toMatchObject({ connected: true, models: 2 });
    expect(await catalog(ctx, "config")).toMatchObject({ model: "fake/scripted", provider: { fake: { options: { apiKey: "[redacted]" } } } });
    const text = JSON.stringify(outputs);
    expect(text).not.toContain(SECRET);
  });
});
