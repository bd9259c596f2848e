// Session administration on a real opencode 2.x server through the v2 route adapter (fork, revert
// stage/clear/commit, rename, compact, models and providers), server detection on both majors, and
// the server's own /openapi.json against the vendored snapshot. Facts: docs/opencode-2x-behaviour.md.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectServer, fetchServerSpec } from "../../src/client/detect.js";
import { AuthError } from "../../src/client/errors.js";
import { connectV2 } from "../../src/client/v2/index.js";
import { startOpencode } from "../support/opencode.js";
import { OPENCODE2_SOURCE_VERSION, startV2Fixture, type V2Fixture } from "../support/opencode2.js";
import { SUMMARY_ANSWER, text, toolCall } from "../support/scripted-model.js";
import { isOutcome } from "../support/v2-events.js";

let v2: V2Fixture;
beforeAll(async () => {
  v2 = await startV2Fixture({ gitInit: true });
});
afterAll(() => v2?.stop());

async function runTurn(sessionID: string, prompt: string) {
  const from = v2.log.events.length;
  await v2.client.request("session.prompt", { path: { sessionID }, body: { text: prompt } });
  return v2.log.waitFor(isOutcome(sessionID), { after: from });
}
const session = async (sessionID: string) => ((await v2.client.request("session.get", { path: { sessionID } })) as { data: Record<string, unknown> }).data;

describe("detecting the server", () => {
  const usingBuiltServer = !process.env.OPENCODE2_BIN;

  it("a 2.x server: major 2, its version and pid, from its health/info route", async () => {
    const identity = await detectServer({ url: v2.server.url, password: v2.server.password });
    expect(identity).toMatchObject({ major: 2, pid: v2.server.pid, specPath: "/openapi.json" });
    expect(["/api/info", "/api/health"]).toContain(identity.via);
    if (usingBuiltServer) expect(identity).toMatchObject({ version: OPENCODE2_SOURCE_VERSION, via: "/api/health" });
    expect(v2.client.identity).toEqual(identity);
  });

  it("serves the same /openapi.json as the vendored snapshot, byte for byte", async () => {
    if (!usingBuiltServer) return; // another 2.x binary serves its own document
    const { bytes } = await fetchServerSpec({ url: v2.server.url, password: v2.server.password }, v2.client.identity);
    expect(bytes.equals(readFileSync("spec/v2-b622626/openapi.json"))).toBe(true);
  });

  it("a wrong password is an AuthError on every probe route", async () => {
    await expect(detectServer({ url: v2.server.url, password: "wrong" })).rejects.toBeInstanceOf(AuthError);
  });

  it("the pinned 1.x server: major 1 from /global/health, and connectV2 refuses it naming the version", async () => {
    const v1 = await startOpencode();
    try {
      const identity = await detectServer({ url: v1.url, password: v1.password });
      expect(identity).toEqual({ major: 1, version: "1.18.33", via: "/global/health", specPath: "/doc" });
      await expect(connectV2({ url: v1.url, password: v1.password })).rejects.toThrow(/is opencode 1\.18\.33, which speaks the v1 API: use connect\(\)/);
    } finally {
      await v1.stop();
    }
  });
});

describe("idle sessions and errors", () => {
  it("interrupt and wait answer 204 on an idle session; an unknown session is a NotFoundError tagged SessionNotFoundError", async () => {
    const id = await v2.newSession("idle");
    expect(await v2.client.request("session.interrupt", { path: { sessionID: id } })).toBeUndefined();
    expect(await v2.client.request("session.wait", { path: { sessionID: id } })).toBeUndefined();
    const error = await v2.client.request("session.get", { path: { sessionID: "ses_doesnotexist" } }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "NotFoundError",
      status: 404,
      serverName: "SessionNotFoundError",
      body: { _tag: "SessionNotFoundError", sessionID: "ses_doesnotexist", message: "Session not found: ses_doesnotexist" },
    });
  });
});

describe("fork", () => {
  it("before a message copies the history up to it into a new session that names its parent", async () => {
    const id = await v2.newSession("fork-source");
    v2.server.model.forSession(id).queue(text("one"), text("two"));
    await runTurn(id, "first");
    await runTurn(id, "second");
    const second = (await v2.messages(id)).find((m) => m.type === "user" && m.text === "second")!;
    // The snapshot's body is {boundary: {type: "before", messageID}}; 2.0.26 takes {before: messageID}.
    const fork = (await v2.client.request("session.fork", { path: { sessionID: id }, body: { boundary: { type: "before", messageID: second.id } } })) as {
      data: { id: string; fork: unknown; title: string };
    };
    expect(fork.data.id).not.toBe(id);
    expect(fork.data.fork).toEqual({ sessionID: id, boundary: { type: "before", messageID: second.id } });
    expect(fork.data.title).toMatch(/\(fork #1\)$/);
    const copied = await v2.messages(fork.data.id);
    expect(copied.map((m) => [m.type, m.text ?? m.content?.[0]?.text])).toEqual([
      ["user", "first"],
      ["assistant", "one"],
    ]);
    expect((await v2.messages(id)).length).toBe(4); // the source is untouched
  });
});

describe("revert", () => {
  it("stage restores the files and marks session.revert; clear undoes it; commit drops the messages for good", async () => {
    const id = await v2.newSession("revert");
    const file = join(v2.server.directory, "reverted.txt");
    v2.server.model.forSession(id).queue(toolCall("write", { path: file, content: "one\n" }), text("wrote it"));
    expect((await runTurn(id, "write it")).type).toBe("session.execution.succeeded");
    expect(existsSync(file)).toBe(true);
    const userMessage = (await v2.messages(id))[0]!;

    const from = v2.log.events.length;
    const staged = (await v2.client.request("session.revert.stage", { path: { sessionID: id }, body: { messageID: userMessage.id } })) as {
      data: { messageID: string; snapshot: string; files: Array<{ file: string; status: string }> };
    };
    expect(staged.data).toMatchObject({ messageID: userMessage.id, files: [{ file: "reverted.txt", status: "deleted" }] });
    expect(existsSync(file)).toBe(false);
    expect((await session(id)).revert).toMatchObject({ messageID: userMessage.id });
    expect((await v2.messages(id)).length).toBe(3); // staged: the messages are still there
    await v2.log.waitFor((e) => e.type === "session.revert.staged" && e.data.sessionID === id, { after: from });

    await v2.client.request("session.revert.clear", { path: { sessionID: id } });
    await v2.log.waitFor((e) => e.type === "session.revert.cleared" && e.data.sessionID === id, { after: from });
    expect(readFileSync(file, "utf8")).toBe("one\n");
    expect((await session(id)).revert).toBeUndefined();

    await v2.client.request("session.revert.stage", { path: { sessionID: id }, body: { messageID: userMessage.id } });
    await v2.client.request("session.revert.commit", { path: { sessionID: id } });
    const committed = await v2.log.waitFor((e) => e.type === "session.revert.committed" && e.data.sessionID === id, { after: from });
    expect(committed.data).toEqual({ sessionID: id, to: userMessage.id });
    expect(existsSync(file)).toBe(false);
    expect(await v2.messages(id)).toEqual([]);
  });
});

describe("rename, compact, models", () => {
  it("rename sets the title (the snapshot's POST .../rename; PATCH /api/session/{id} on 2.0.26)", async () => {
    const id = await v2.newSession("before");
    expect(await v2.client.request("session.rename", { path: { sessionID: id }, body: { title: "after" } })).toBeUndefined();
    expect((await session(id)).title).toBe("after");
  });

  it("compact is admitted as an input of type compaction, runs as its own execution and records the summary as a compaction message", async () => {
    const id = await v2.newSession("compact");
    v2.server.model.forSession(id).queue(text("something to compact"));
    await runTurn(id, "hello");
    const from = v2.log.events.length;
    const admitted = (await v2.client.request("session.compact", { path: { sessionID: id }, body: {} })) as { data: { id: string; type: string } };
    expect(admitted.data).toMatchObject({ type: "compaction", id: expect.stringMatching(/^msg_/) });
    const outcome = await v2.log.waitFor(isOutcome(id), { after: from });
    expect(outcome.type).toBe("session.execution.succeeded");
    expect(v2.log.sequence(id, from)).toEqual([
      "session.compaction.admitted",
      "session.execution.started",
      "session.compaction.started",
      "session.compaction.ended",
      "session.execution.succeeded",
    ]);
    expect(v2.server.model.requestsFor(id).filter((r) => r.kind === "summary")).toHaveLength(1);
    const compaction = (await v2.messages(id)).at(-1)!;
    expect(compaction).toMatchObject({ id: admitted.data.id, type: "compaction", status: "completed", reason: "manual", summary: SUMMARY_ANSWER });
  });

  it("models and providers list the configured provider; the catalogue lists connectable integrations", async () => {
    const models = (await v2.client.request("model.list", {})) as { data: Array<{ id: string; providerID: string; settings?: Record<string, unknown> }> };
    expect(models.data.map((m) => `${m.providerID}/${m.id}`).sort()).toEqual(["fake/backup", "fake/scripted"]);
    // Provider settings come back as configured, apiKey included: never show this to a user as is.
    expect(models.data[0]!.settings).toHaveProperty("apiKey");
    const providers = (await v2.client.request("provider.list", {})) as { data: Array<{ id: string }> };
    expect(providers.data.map((p) => p.id)).toEqual(["fake"]);
    const catalog = (await v2.client.request("catalog.list", {})) as { data: Array<{ id: string; methods: unknown[] }> };
    expect(catalog.data.length).toBeGreaterThan(0);
    expect(catalog.data[0]).toHaveProperty("methods");
  });

  it("the config is a bare list of its sources, in load order, the provider's apiKey as configured", async () => {
    const entries = (await v2.client.request("config.get", {})) as Array<{ type: string; path: string; info?: Record<string, unknown> }>;
    expect(Array.isArray(entries)).toBe(true);
    const file = join(v2.server.home, ".config", "opencode", "opencode.json");
    expect(entries.map((e) => [e.type, e.path])).toEqual([
      ["document", file],
      ["directory", join(v2.server.home, ".config", "opencode")],
    ]);
    // The 1.x config file as 2.x reads it: `provider.*.options` is `providers.*.settings`, `permission` is `permissions`.
    expect(entries[0]!.info).toMatchObject({
      providers: { fake: { settings: { baseURL: v2.server.model.baseURL, apiKey: "none" } } },
      model: { providerID: "fake", model: "scripted" },
    });
  });
});
