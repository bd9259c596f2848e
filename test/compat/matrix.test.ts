// The compatibility subset of the e2e suite, once per target (see targets.ts): the features people
// use, through the MCP server where the feature is a tool, against a real opencode release with the
// scripted model. Every outcome is checked against what opencode recorded (the session re-read).
// `npm run test:compat` runs it per version and turns the results into docs/compatibility.md.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fetchSpecFrom } from "../../codegen/lib/server-fetch.js";
import { listOperations, type OpenApiDocument } from "../../src/openapi/spec.js";
import { specInfo } from "../../generated/operations.js";
import { specInfo as v2SpecInfo } from "../../generated/v2/operations.js";
import { resolveV2Routes, V2_ROUTES, type V2RouteName, type V2Routes } from "../../src/client/v2/routes.js";
import type { CompatibilityData } from "../../src/core/engine/server/compatibility.js";
import { startMcpFor, type McpSession } from "../support/mcp-client.js";
import type { TestOpencode } from "../support/opencode.js";
import { httpError, text, times, toolCall } from "../support/scripted-model.js";
import { oracleFor, type Oracle } from "./oracle.js";
import { columnDifferences, type ObservedResult } from "./report.js";
import { selectedTargets } from "./targets.js";
import { COLOR_QUESTION } from "../support/questions.js";

type Row = Record<string, unknown>;

/** The compatibility data this matrix measured (docs/compatibility.md is rendered from it). */
const DATA = new URL("../../spec/compatibility.json", import.meta.url);
/** The last test of each target: this run agrees with the data. */
const AGREES = "agrees with spec/compatibility.json";

for (const target of selectedTargets()) {
  describe(`opencode ${target.name}`, () => {
    let server: TestOpencode;
    let mcp: McpSession;
    /** Reads back what opencode recorded, through the API of the server's major. */
    let oracle: Oracle;
    const storedAnswer = (sessionId: string) => oracle.storedAnswer(sessionId);
    let version: string;
    let operationIds: Set<string>;
    /** The server's own document. */
    let serverDoc: OpenApiDocument;
    /** 2.x: the v2 engine's operations resolved from the server's document, as the conductor resolves them. */
    let v2Routes: V2Routes | undefined;
    /**
     * The report's status is what opencode recorded (derived from the session re-read, never
     * written here), and that is the ending the row scripts; a done turn's answer is the recorded one.
     */
    async function expectRecorded(data: Row, intended: string): Promise<void> {
      const recorded = await oracle.turn(data.session_id as string);
      expect(data.status, JSON.stringify(data).slice(0, 400)).toBe(recorded.status);
      expect(recorded.status, "the row's ending is what opencode recorded").toBe(intended);
      if (recorded.status === "done" && "answer" in data) expect(data.answer).toBe(recorded.answer);
    }
    /** Rows where the conductor refused as it should (the release lacks the feature), for the report. */
    const notes: Record<string, string> = {};

    /**
     * The start of the conductor's answer where this release lacks `operationId` (its own spec) or
     * the matrix found it broken there (BEHAVIOUR_LIMITS); undefined where it must work. On 2.x a
     * high-level tool goes through the v2 engine, so the engine's own operation (`v2Route`) decides:
     * its route adapter's error (routes.ts) where the server lacks it.
     */
    function expectedRefusal(operationId: string, v2Route?: V2RouteName, misbehaves = false): string | undefined {
      if (v2Routes && v2Route) return v2Routes.has(v2Route) ? undefined : `opencode ${version} cannot ${V2_ROUTES[v2Route].purpose}`;
      if (!operationIds.has(operationId)) return `opencode ${version} has no operation ${operationId}`;
      return misbehaves ? `does not work on opencode ${version}` : undefined;
    }

    /**
     * Asserts the clear refusal and records it; true when the row ends there. Whether the conductor
     * must refuse comes from the server alone: its own document (the operation is missing) or its
     * behaviour (`misbehaves`: the row tried the operation on the server directly and it did not do
     * its job), never from the conductor's list of known limits.
     */
    function refused(row: string, operationId: string, answer: { isError: boolean; text: string }, v2Route?: V2RouteName, misbehaves = false): boolean {
      const refusal = expectedRefusal(operationId, v2Route, misbehaves);
      if (!refusal) return false;
      expect(answer.isError, answer.text).toBe(true);
      expect(answer.text).toContain(refusal);
      const missing = v2Routes && v2Route ? `${v2Route} is missing` : `${operationId} ${operationIds.has(operationId) ? "misbehaves" : "is missing"}`;
      notes[row] = `refused: ${missing} on this release`;
      return true;
    }

    /** The release takes permission rules per session (1.x; 2.0.26's `session.create` has `permissions`). */
    let sessionRules = true;
    const NO_SESSION_RULES = "cannot set permission rules per session";

    /**
     * Rows that pass `permissions` to oc_delegate: on a release without per-session rules the
     * conductor must refuse them clearly (recorded as n/a); true when the row ends there.
     */
    function refusedRules(row: string, answer: { isError: boolean; text: string }): boolean {
      if (sessionRules) return false;
      expect(answer.isError, answer.text).toBe(true);
      expect(answer.text).toContain(`opencode ${version} ${NO_SESSION_RULES}`);
      notes[row] = "refused: this release takes no permission rules per session";
      return true;
    }

    beforeAll(async () => {
      // `bash` is 1.x's name of the shell tool; 2.x reads this 1.x config shape as its `shell`.
      server = await target.start({ permission: { bash: "ask" }, gitInit: true });
      const fetched = await fetchSpecFrom(server);
      oracle = await oracleFor(server, fetched.major);
      if (fetched.major === 2) sessionRules = createTakesPermissions(JSON.parse(fetched.doc.toString("utf8")) as OpenApiDocument);
      version = fetched.version;
      serverDoc = JSON.parse(fetched.doc.toString("utf8")) as OpenApiDocument;
      operationIds = new Set(listOperations(serverDoc).map((op) => op.id));
      if (fetched.major === 2) v2Routes = resolveV2Routes(serverDoc, version);
      const out = process.env.OCC_COMPAT_OUT;
      if (out) {
        // The runner diffs this spec against the pinned one.
        mkdirSync(out, { recursive: true });
        writeFileSync(join(out, `${target.name}.openapi.json`), fetched.doc);
        writeFileSync(join(out, `${target.name}.version`), fetched.version);
      }
      mcp = await startMcpFor(server, {
        OPENCODE_CONDUCTOR_APPROVALS: "return",
        OPENCODE_CONDUCTOR_AUDIT: "off",
        OPENCODE_CONDUCTOR_RETRY_TIMEOUT_S: "1",
        OPENCODE_CONDUCTOR_STATE_DIR: join(server.root, "state"),
      });
    });
    afterAll(async () => {
      await mcp?.close();
      await server?.stop();
      const out = process.env.OCC_COMPAT_OUT;
      if (out) writeFileSync(join(out, `${target.name}.notes.json`), JSON.stringify(notes));
    });
    /** Each row's result as this run found it, in the data's shape (a failure's reason aside). */
    const observed: Record<string, ObservedResult> = {};
    // A failed row must not leave answers queued for the next one.
    afterEach(({ task }) => {
      if (task.name !== AGREES)
        observed[task.name] = task.result?.state === "pass" ? { ok: true, ...(notes[task.name] ? { refused: notes[task.name] } : {}) } : { ok: false };
      server?.model.clear();
      server?.model.for("scripted").clear();
      server?.model.for("backup").clear();
    });

    it("connect", async () => {
      const r = await mcp.call("oc_status");
      expect(r.isError, r.text).toBe(false);
      expect(r.data.healthy).toBe(true);
      if (target.expectVersion) expect(r.data.version).toBe(target.expectVersion);
      expect(r.data.version).toBe(version);
      // oc_status reports the server's own spec against the pin of its major (1.x: the SDK's, 2.x:
      // spec/v2/), and what it lists is what the two documents say.
      const pin =
        oracle.major === 2
          ? { version: v2SpecInfo.opencodeVersion, file: "spec/v2/openapi.json" }
          : { version: specInfo.opencodeVersion, file: "spec/openapi.json" };
      const listed = await mcp.call("oc_status", { spec_ops: true });
      const spec = (listed.data.compatibility as { spec?: Record<string, unknown> }).spec;
      expect(spec, listed.text).toMatchObject({ pinned: pin.version, operations: operationIds.size });
      const expected = specDifference(JSON.parse(readFileSync(pin.file, "utf8")) as OpenApiDocument, serverDoc, oracle.major === 2);
      expect([...(spec!.missing_ids as string[])].sort()).toEqual(expected.missing);
      expect([...(spec!.extra_ids as string[])].sort()).toEqual(expected.extra);
      expect(spec).toMatchObject({ missing: expected.missing.length, extra: expected.extra.length, changed: (spec!.changed_ids as string[]).length });
      expect(listed.text).toContain(
        spec!.same_as_pinned
          ? `Its spec is the pinned one (${pin.version}).`
          : `Its spec vs the pinned ${pin.version}: ${operationIds.size} operations, ${expected.missing.length} missing`,
      );
    });

    it("delegate: text", async () => {
      server.model.queue(text(`Hello from opencode ${target.name}.`));
      const r = await mcp.call("oc_delegate", { task: "Say hello" });
      await expectRecorded(r.data, "done");
      expect(r.data.answer).toBe(`Hello from opencode ${target.name}.`);
      expect(await storedAnswer(r.data.session_id as string)).toBe(r.data.answer);
    });

    it("delegate: write a file", async () => {
      const file = join(server.directory, "written.txt");
      server.model.queue(oracle.writeFile(file, "written\n"), text("Wrote it."));
      const r = await mcp.call("oc_delegate", { task: "Write written.txt", permissions: "auto" });
      if (refusedRules("delegate: write a file", r)) return;
      await expectRecorded(r.data, "done");
      expect(readFileSync(file, "utf8")).toBe("written\n");
      expect((r.data.files as Row[]).some((f) => file.endsWith(String(f.path)))).toBe(true);
      expect(await storedAnswer(r.data.session_id as string)).toBe("Wrote it.");
    });

    it("delegate: bash", async () => {
      const marker = join(server.directory, "bash-ran.txt");
      server.model.queue(oracle.shell(`echo ran > ${marker}`), text("Ran it."));
      const r = await mcp.call("oc_delegate", { task: "Run the command", permissions: "auto" });
      if (refusedRules("delegate: bash", r)) return;
      await expectRecorded(r.data, "done");
      expect(readFileSync(marker, "utf8").trim()).toBe("ran");
      expect((r.data.tools as Row[]).find((t) => t.tool === oracle.shellTool)?.status).toBe("completed");
    });

    it("parallel", async () => {
      server.model.queue(times(2, text("parallel answer")));
      const r = await mcp.call("oc_delegate_parallel", { tasks: [{ task: "First" }, { task: "Second" }] });
      expect(r.isError, r.text).toBe(false);
      const results = r.data.results as Row[];
      for (const x of results) await expectRecorded(x, "done");
      const ids = results.map((x) => x.session_id as string);
      expect(new Set(ids).size).toBe(2);
      for (const id of ids) expect(await storedAnswer(id)).toBe("parallel answer");
    });

    it("background + wait", async () => {
      server.model.queue(text("Finished in the background.", { delayMs: 1_000 }));
      const started = await mcp.call("oc_delegate", { task: "Background task", wait: false });
      expect(started.data.status, started.text).toBe("running");
      const done = await mcp.call("oc_wait", { session_id: started.data.session_id });
      await expectRecorded(done.data, "done");
      expect(done.data.answer).toBe("Finished in the background.");
      expect(await storedAnswer(started.data.session_id as string)).toBe("Finished in the background.");
    });

    it("permission: blocked + answer", async () => {
      const marker = join(server.directory, "approved.txt");
      server.model.queue(oracle.shell(`echo approved > ${marker}`), text("Approved and done."));
      const blocked = await mcp.call("oc_delegate", { task: "Run the command", permissions: "agent" });
      if (refusedRules("permission: blocked + answer", blocked)) return;
      await expectRecorded(blocked.data, "blocked");
      const pending = blocked.data.pending as Row[];
      expect(pending[0]?.kind).toBe("permission");
      expect(existsSync(marker)).toBe(false);
      const answered = await mcp.call("oc_answer", { request_id: pending[0]!.id, decision: "once" });
      expect(answered.isError, answered.text).toBe(false);
      const done = await mcp.call("oc_wait", { session_id: blocked.data.session_id });
      await expectRecorded(done.data, "done");
      expect(readFileSync(marker, "utf8").trim()).toBe("approved");
    });

    it("question", async () => {
      const questions = [COLOR_QUESTION];
      server.model.queue(toolCall("question", { questions }), text("Blue it is."));
      const blocked = await mcp.call("oc_delegate", { task: "Pick a color" });
      await expectRecorded(blocked.data, "blocked");
      const pending = blocked.data.pending as Row[];
      expect(pending[0]?.kind).toBe("question");
      const answered = await mcp.call("oc_answer", { request_id: pending[0]!.id, answers: [["Blue"]] });
      expect(answered.isError, answered.text).toBe(false);
      const done = await mcp.call("oc_wait", { session_id: blocked.data.session_id });
      await expectRecorded(done.data, "done");
      expect(done.data.tools).toEqual([expect.objectContaining({ tool: "question", status: "completed" })]);
      expect(await storedAnswer(blocked.data.session_id as string)).toBe("Blue it is.");
    });

    it("fallback on 429", async () => {
      server.model.for("scripted").queue(times(6, httpError(429, { retryAfterMs: 300 })));
      server.model.for("backup").queue(text("The backup answered."));
      const r = await mcp.call("oc_delegate", { task: "Rate limited", model: "fake/scripted", fallback_models: ["fake/backup"] });
      await expectRecorded(r.data, "done");
      expect(r.data.answer).toBe("The backup answered.");
      expect(r.data.fallbacks).toEqual([expect.objectContaining({ from: "fake/scripted", to: "fake/backup" })]);
      expect(await storedAnswer(r.data.session_id as string)).toBe("The backup answered.");
    });

    it("interrupt", async () => {
      server.model.queue(text("too late", { delayMs: 20_000 }));
      const seen = server.model.requests.filter((q) => q.kind === "chat").length;
      const started = await mcp.call("oc_delegate", { task: "A slow task", wait: false });
      const sessionId = started.data.session_id as string;
      // By count, not by session: releases before 1.14 do not send the x-session-id header.
      await server.model.waitForRequests(seen + 1, { kind: "chat" });
      const stopped = await mcp.call("oc_interrupt", { session_id: sessionId });
      expect(stopped.isError, stopped.text).toBe(false);
      await expectRecorded({ ...stopped.data, session_id: sessionId }, "interrupted");
      const state = await mcp.call("oc_result", { session_id: sessionId });
      expect(state.data.state, state.text).toBe("idle");
      expect(await storedAnswer(sessionId)).not.toBe("too late");
    });

    // One turn that wrote a file, shared by the diff, fork and revert rows.
    let edited: Promise<{ sessionId: string; file: string; userMessageId: string }> | undefined;
    const editedSession = () =>
      (edited ??= (async () => {
        const file = join(server.directory, "diffed.txt");
        server.model.queue(oracle.writeFile(file, "one line\n"), text("Added diffed.txt."));
        // Without per-session rules the server's own config decides (it asks only for the shell).
        const r = await mcp.call("oc_delegate", { task: "Add diffed.txt", ...(sessionRules ? { permissions: "auto" } : {}) });
        await expectRecorded(r.data, "done");
        const sessionId = r.data.session_id as string;
        return { sessionId, file, userMessageId: await oracle.firstUserMessageId(sessionId) };
      })());

    it("session: diff", async () => {
      const { sessionId, file, userMessageId } = await editedSession();
      const diff = await mcp.call("oc_session", { session_id: sessionId, action: "diff" });
      // What opencode recorded for that turn, read straight from it after the conductor's answer (1.x
      // writes a turn's diff after the turn ends: read before, a loaded machine saw none yet): the
      // files, and line counts only where it keeps them. A release that records none for a turn
      // that wrote a file misbehaves.
      const recorded = operationIds.has("session.diff") || oracle.major === 2 ? await oracle.turnFiles(sessionId, userMessageId) : [];
      const misbehaves = existsSync(file) && !recorded.some((f) => f.file === "diffed.txt");
      if (refused("session: diff", "session.diff", diff, "session.messages", misbehaves)) return;
      expect(diff.isError, diff.text).toBe(false);
      const files = (diff.data.result as Row).files as Row[];
      expect(files.map((f) => f.file)).toEqual(["diffed.txt"]);
      expect(files.map((f) => f.file)).toEqual(recorded.map((f) => f.file));
      for (const [i, f] of files.entries()) expect(f.additions, JSON.stringify(f)).toBe(recorded[i]!.additions);
    });

    it("session: fork", async () => {
      const { sessionId } = await editedSession();
      const fork = await mcp.call("oc_session", { session_id: sessionId, action: "fork" });
      expect(fork.isError, fork.text).toBe(false);
      const forkId = (fork.data.result as Row).id as string;
      expect(forkId).not.toBe(sessionId);
      expect(await oracle.sessionId(forkId)).toBe(forkId);
      expect(await storedAnswer(forkId)).toBe("Added diffed.txt.");
    });

    /**
     * 1.x: whether the release's own revert leaves the files a turn wrote (a turn of its own writes
     * a probe file, then the test calls `session.revert` on the server directly, not through the
     * conductor). 2.x: the route adapter decides from the server's document.
     */
    async function revertMisbehaves(): Promise<boolean> {
      if (oracle.major === 2 || !operationIds.has("session.revert")) return false;
      const probe = join(server.directory, "revert-probe.txt");
      server.model.queue(oracle.writeFile(probe, "probe\n"), text("Wrote the probe."));
      const r = await mcp.call("oc_delegate", { task: "Write the probe", ...(sessionRules ? { permissions: "auto" } : {}) });
      await expectRecorded(r.data, "done");
      expect(existsSync(probe)).toBe(true);
      const sessionId = r.data.session_id as string;
      await oracle.revert(sessionId, await oracle.firstUserMessageId(sessionId));
      return existsSync(probe);
    }

    it("session: revert", async () => {
      const { sessionId, file, userMessageId } = await editedSession();
      const misbehaves = await revertMisbehaves();
      const reverted = await mcp.call("oc_session", { session_id: sessionId, action: "revert", message_id: userMessageId });
      if (refused("session: revert", "session.revert", reverted, "session.revert.stage", misbehaves)) return expect(existsSync(file)).toBe(true);
      expect(reverted.isError, reverted.text).toBe(false);
      expect(existsSync(file)).toBe(false);
      expect(await oracle.revertedTo(sessionId)).toBe(userMessageId);
      expect((reverted.data.result as Row).revert).toEqual(expect.objectContaining({ messageId: userMessageId }));
    });

    it("models and catalog", async () => {
      const models = await mcp.call("oc_models");
      expect(models.isError, models.text).toBe(false);
      expect((models.data.models as Row[]).map((m) => m.id)).toEqual(expect.arrayContaining(["fake/scripted", "fake/backup"]));
      for (const kind of ["agents", "commands", "skills"]) {
        const r = await mcp.call("oc_catalog", { kind });
        expect(r.isError, `${kind}: ${r.text}`).toBe(false);
      }
      // The server's config as it read it (1.x: one merged object; 2.x: its sources), the scripted
      // provider's key redacted.
      const config = await mcp.call("oc_catalog", { kind: "config" });
      expect(config.isError, `config: ${config.text}`).toBe(false);
      const json = JSON.stringify(config.data.items);
      expect(json).toContain(server.model.baseURL);
      expect(json).toContain('"apiKey":"[redacted]"');
      expect(json).not.toContain('"apiKey":"none"');
    });

    it("oc_api: v1 operations", async () => {
      if (oracle.major === 2) {
        // 2.x has no v1 route (and 2.0.26 names its own `GET /api/session` `session.list`), so the
        // v1 route is asked for by method and path: refused before anything is sent.
        const v1 = await mcp.call("oc_api", { method: "GET", path: "/session" });
        expect(v1.isError, v1.text).toBe(true);
        expect(v1.text).toContain(`opencode ${version} has no operation session.list (GET /session), so nothing was sent: it speaks only the v2 API`);
        notes["oc_api: v1 operations"] = "refused: this release has no v1 routes (2.x)";
        return;
      }
      const list = await mcp.call("oc_api", { operation: "session.list" });
      if (refused("oc_api: v1 operations", "session.list", list)) return;
      expect(list.isError, list.text).toBe(false);
      const sessions = list.data.result as Row[];
      expect(sessions.length).toBeGreaterThan(0);
      const one = await mcp.call("oc_api", { method: "GET", path: `/session/${String(sessions[0]!.id)}` });
      expect(one.isError, one.text).toBe(false);
      expect((one.data.result as Row).id).toBe(sessions[0]!.id);
    });

    it("oc_api: v2 operations", async () => {
      const list = await mcp.call("oc_api", { operation: "v2.session.list" });
      if (refused("oc_api: v2 operations", "v2.session.list", list)) return;
      expect(list.isError, list.text).toBe(false);
      const page = list.data.result as { items?: Row[]; data?: Row[] } | Row[];
      const rows = Array.isArray(page) ? page : (page.items ?? page.data ?? []);
      expect(rows.length).toBeGreaterThan(0);
      const one = await mcp.call("oc_api", { operation: "v2.session.get", params: { sessionID: rows[0]!.id } });
      if (refused("oc_api: v2 operations", "v2.session.get", one)) return;
      expect(one.isError, one.text).toBe(false);
      expect(JSON.stringify(one.data.result)).toContain(String(rows[0]!.id));
    });

    // CI re-runs the targets and compares: a result that differs from spec/compatibility.json (the
    // release changed, the conductor changed, or the data was edited) fails until
    // `npm run test:compat -- <target>` measures it again. A run that rewrites the data
    // (OCC_COMPAT_OUT, `npm run test:compat`) does not compare.
    if (!process.env.OCC_COMPAT_OUT)
      it(AGREES, () => {
        const data = JSON.parse(readFileSync(DATA, "utf8")) as CompatibilityData;
        const column = data.versions[target.name];
        const fix = `re-measure it: npm run test:compat -- ${target.name} (then commit spec/compatibility.json and docs/compatibility.md)`;
        expect(column, `spec/compatibility.json has no column ${target.name}: ${fix}`).toBeDefined();
        expect(columnDifferences(observed, column!), `opencode ${target.name}: this run's results differ from spec/compatibility.json; ${fix}`).toEqual([]);
      });
  });
}

/**
 * Pinned operations the server lacks and server operations the pin lacks, as oc_status must count
 * them. 1.x: matched by id, a pinned one also by its method and path. 2.x: by id without the
 * pre-release's `v2.` prefix only, as `npm run spec:diff -- --ignore-prefix v2.` and this matrix's report count it.
 */
function specDifference(pinned: OpenApiDocument, theirs: OpenApiDocument, major2: boolean): { missing: string[]; extra: string[] } {
  const key = (id: string) => (major2 && id.startsWith("v2.") ? id.slice(3) : id);
  const ours = listOperations(pinned);
  const server = listOperations(theirs);
  const ids = new Set(server.map((o) => key(o.id)));
  const routes = new Set(server.map((o) => `${o.method} ${o.path}`));
  const pinnedIds = new Set(ours.map((o) => o.id));
  return {
    missing: ours
      .filter((o) => !ids.has(o.id) && (major2 || !routes.has(`${o.method} ${o.path}`)))
      .map((o) => o.id)
      .sort(),
    extra: server
      .filter((o) => !pinnedIds.has(key(o.id)))
      .map((o) => o.id)
      .sort(),
  };
}

/** Whether a 2.x document's `session.create` takes `permissions` (2.0.26 does, the pre-release does not). */
function createTakesPermissions(spec: OpenApiDocument): boolean {
  const op = listOperations(spec).find((o) => o.id === "session.create" || o.id === "v2.session.create");
  const body = JSON.stringify((spec.paths as Record<string, Record<string, { requestBody?: unknown }>>)[op?.path ?? ""]?.[op?.method ?? ""]?.requestBody ?? {});
  return body.includes('"permissions"');
}
