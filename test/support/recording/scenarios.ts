// The scenarios `npm run record` runs against the real opencode harness. Each one drives the
// client exactly as its replay test does, so the replay serves every request the test makes.
import { connect, NotFoundError, type OpencodeClient } from "../../../src/client/index.js";
import { catalog, CATALOG_KINDS } from "../../../src/core/catalog/catalogs.js";
import { listModels } from "../../../src/core/catalog/models.js";
import { serverStatus } from "../../../src/core/catalog/status.js";
import type { CoreContext } from "../../../src/core/context.js";
import { abortSession, compactSession, deleteSession, shellInSession } from "../../../src/core/sessions/actions.js";
import { sessionDiff } from "../../../src/core/sessions/diff.js";
import { sessionInfo } from "../../../src/core/sessions/info.js";
import { sessionMessages } from "../../../src/core/sessions/messages.js";
import { listSessions } from "../../../src/core/sessions/rows.js";
import type { EventHub } from "../../../src/core/event-hub.js";
import { V1Engine } from "../../../src/core/engine/v1/v1-engine.js";
import type { ScenarioName } from "../fixture.js";
import type { StartOpencodeOptions, TestOpencode } from "../opencode.js";
import { hang, httpError, text, times, toolCall, toolCalls, type Step } from "../scripted-model.js";
import { createSession, prompt, promptAndWait, readMessages, SCRIPTED_MODEL, watchSession, type SessionWatch } from "../turns.js";
import { COLOR_QUESTION } from "../questions.js";
import { DELETED_TITLE, recordBlockingCalls, SUBAGENT_SCENARIO, UNRELATED_TITLE } from "./subagent-requests.js";

export interface Scenario {
  name: ScenarioName;
  server?: StartOpencodeOptions;
  /** Runs the calls to record through `client` (the recording one). */
  run(client: OpencodeClient, server: TestOpencode): Promise<void>;
}

/** A session id that does not exist (same shape as a real one). */
export const MISSING_SESSION = "ses_0000000000000000000000000";
export const TEXT_ANSWER = "Hello from scripted.";
export const COMPACTED_ANSWER = "All done after the compaction.";

/** A fake key in the server's own config: discovery must never show it, whatever opencode answers. */
export const DISCOVERY_SECRET = "sk-test-secret-0123456789abcdef";

/** Secrets where opencode keeps them (provider key, options, headers, MCP environment), and a second provider with costs, limits and variants. */
const DISCOVERY_CONFIG = {
  enabled_providers: ["fake", "paid"],
  provider: {
    fake: {
      options: { apiKey: DISCOVERY_SECRET, headers: { "X-Custom": DISCOVERY_SECRET } },
      models: { backup: { headers: { "x-extra": DISCOVERY_SECRET } } },
    },
    paid: {
      npm: "@ai-sdk/openai-compatible",
      name: "Paid",
      env: ["PAID_API_KEY"],
      options: { baseURL: "http://user:pw@paid.invalid/v1", apiKey: DISCOVERY_SECRET },
      models: {
        big: {
          name: "Big Thinker",
          reasoning: true,
          attachment: true,
          tool_call: true,
          cost: { input: 3, output: 15 },
          limit: { context: 200000, output: 64000 },
          modalities: { input: ["text", "image", "pdf"], output: ["text"] },
          variants: { high: {}, low: {} },
        },
        "small-free": { name: "Small Free" },
      },
    },
  },
  agent: { helper: { mode: "subagent", description: "Helps.", model: "paid/big", hidden: true, prompt: "long prompt" } },
  mcp: { local: { type: "local", command: ["occ-no-such-mcp-server"], environment: { GITHUB_TOKEN: DISCOVERY_SECRET } } },
};

/** An agent no opencode config defines. */
export const UNKNOWN_AGENT = "nope-agent";
/** server-stopped: how long opencode stays SIGSTOPped, and what the model answers after it. */
export const STOPPED_MS = 3_000;
export const STOPPED_ANSWER = "Answered after the stop.";

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`recording went wrong: ${what}`);
}

/**
 * Waits until opencode has recorded the turn's end: an idle that comes after the assistant message
 * turned terminal (completed or errored), or after a session error when no assistant message
 * exists. The first idle of a failed turn comes before its error lands, so it is not enough.
 */
async function settled(watch: SessionWatch): Promise<void> {
  const terminalAt = () =>
    watch.events.findLastIndex((e) => {
      if (e.type === "session.error") return !watch.events.some((m) => m.type === "message.updated" && m.properties.info.role === "assistant");
      return (
        e.type === "message.updated" &&
        e.properties.info.role === "assistant" &&
        (e.properties.info.time.completed !== undefined || e.properties.info.error !== undefined)
      );
    });
  await watch.waitFor("the recorded end of the turn", (e) => e.type === "session.idle" && terminalAt() >= 0 && watch.events.indexOf(e) > terminalAt());
}

/** A failing turn: the model answers `steps`; the recording runs until opencode recorded the end. */
function endScenario(
  name: ScenarioName,
  steps: Step[],
  o: {
    model?: { providerID: string; modelID: string };
    server?: StartOpencodeOptions;
    during?: (client: OpencodeClient, id: string, watch: SessionWatch) => Promise<void>;
  } = {},
): Scenario {
  return {
    name,
    ...(o.server ? { server: o.server } : {}),
    async run(client, server) {
      const session = await createSession(client, name);
      if (steps.length) server.model.forSession(session.id).queue(...steps);
      const watch = await watchSession(client, session.id);
      try {
        await prompt(client, session.id, "go", o.model);
        await o.during?.(client, session.id, watch);
        await settled(watch);
      } finally {
        watch.close();
      }
      await readMessages(client, session.id); // what opencode recorded, once settled
    },
  };
}

const abortAfter =
  (what: string, match: (e: { type: string; properties?: unknown }) => boolean) => async (client: OpencodeClient, id: string, watch: SessionWatch) => {
    await watch.waitFor(what, match as (e: unknown) => boolean);
    await client.call("session.abort", { path: { sessionID: id } });
  };

/**
 * The sessions that asked for a permission, in order, from a stream of every session's events on
 * a client of its own (not recorded: the replay needs no events).
 */
async function watchAsked(server: TestOpencode) {
  const plain = connect({ url: server.url, password: server.password, directory: server.directory });
  const controller = new AbortController();
  const asked: string[] = [];
  let wake = () => undefined as void;
  let live!: () => void;
  const connected = new Promise<void>((resolve) => (live = resolve));
  void (async () => {
    for await (const e of plain.events({ signal: controller.signal })) {
      if (e.type === "server.connected") live();
      if (e.type === "permission.asked") asked.push(e.properties.sessionID);
      wake();
    }
  })().catch(() => undefined);
  await connected;
  return {
    asked,
    /** Resolves once `n` sessions asked; fails after 60 s naming who did. */
    until: (n: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`recording went wrong: ${asked.length} of ${n} permissions asked`)), 60_000);
        wake = () => {
          if (asked.length >= n) {
            clearTimeout(timer);
            resolve();
          }
        };
        wake();
      }),
    close: () => controller.abort(),
  };
}

/** 1.x's sub-agent: the `task` tool, by default with the built-in `general` agent. */
const task = (description: string, agent = "general") => ({ name: "task", args: { description, prompt: `${description}, then say so`, subagent_type: agent } });
const bash = (command: string) => ({ name: "bash", args: { command, description: "marker" } });

export const scenarios: Scenario[] = [
  {
    name: "session-crud",
    async run(client) {
      const created = await createSession(client, "crud");
      const listed = await client.call("session.list");
      check(
        listed.some((s) => s.id === created.id),
        "session.list misses the new session",
      );
      await client.call("session.get", { path: { sessionID: created.id } });
      const missing = await client.call("session.get", { path: { sessionID: MISSING_SESSION } }).catch((e: unknown) => e);
      check(missing instanceof NotFoundError, "session.get of a missing id did not give 404");
    },
  },
  {
    name: "text-turn",
    async run(client, server) {
      const session = await createSession(client, "text turn");
      // The server's only turn, so the model's shared queue: releases before 1.14 send no x-session-id.
      server.model.queue(text(TEXT_ANSWER));
      const turn = await promptAndWait(client, session.id, "say hello");
      check(turn.answer === TEXT_ANSWER, `answer was ${JSON.stringify(turn.answer)}`);
    },
  },
  {
    name: "compaction-turn",
    // A context window the first step's reported usage nearly fills: opencode compacts before the next step.
    server: { config: { provider: { fake: { models: { scripted: { name: "Scripted", limit: { context: 16_000, output: 1_000 } } } } } } },
    async run(client, server) {
      const session = await createSession(client, "compaction turn");
      server.model.queue(
        toolCall("bash", { command: "echo compacted", description: "say it" }, { usage: { prompt_tokens: 15_500, completion_tokens: 20 } }),
        text("Summary of the work so far."),
        text(COMPACTED_ANSWER),
      );
      const turn = await promptAndWait(client, session.id, "say it in the shell, then report");
      check(turn.answer === COMPACTED_ANSWER, `answer was ${JSON.stringify(turn.answer)}`);
      check(
        turn.messages.some((m) => m.parts.some((p) => p.type === "compaction")),
        "opencode did not compact the session",
      );
    },
  },
  // The same, but the compaction's summary call answers HTTP 400: the failed summary ends the turn
  // (its error lands after the first idle, like any failed reply's).
  endScenario(
    "compaction-error-400",
    [toolCall("bash", { command: "echo compacted", description: "say it" }, { usage: { prompt_tokens: 15_500 } }), httpError(400)],
    {
      server: { config: { provider: { fake: { models: { scripted: { name: "Scripted", limit: { context: 16_000, output: 1_000 } } } } } } },
      during: async (_client, _id, watch) => {
        await watch.waitFor(
          "the summary's error",
          (e) => e.type === "message.updated" && e.properties.info.role === "assistant" && !!e.properties.info.summary && !!e.properties.info.error,
        );
      },
    },
  ),
  {
    name: "tool-turn",
    async run(client, server) {
      const session = await createSession(client, "tool turn");
      server.model.forSession(session.id).queue(toolCall("write", { filePath: `${server.directory}/hello.txt`, content: "hello\n" }), text("done"));
      const turn = await promptAndWait(client, session.id, "write hello.txt");
      check(turn.answer === "done", `answer was ${JSON.stringify(turn.answer)}`);
    },
  },
  {
    name: "permission",
    server: { permission: { bash: "ask" } },
    async run(client, server) {
      const session = await createSession(client, "permission");
      server.model.forSession(session.id).queue(toolCall("bash", { command: "echo x > approved.txt", description: "approve" }), text("done"));
      const watch = await watchSession(client, session.id);
      try {
        await prompt(client, session.id, "run echo");
        const asked = await watch.waitFor("permission.asked", (e) => e.type === "permission.asked");
        const list = await client.call("permission.list");
        check(list.length === 1, `permission.list had ${list.length} entries`);
        const id = (asked.properties as { id: string }).id;
        await client.call("permission.reply", { path: { requestID: id }, body: { reply: "once" } });
        await watch.idle();
      } finally {
        watch.close();
      }
      await readMessages(client, session.id);
    },
  },
  {
    name: "retry-failure",
    async run(client, server) {
      const session = await createSession(client, "retry failure");
      server.model.forSession(session.id).queue(times(6, httpError(429, { retryAfterMs: 200 })));
      const turn = await promptAndWait(client, session.id, "hello", { timeoutMs: 60_000 });
      check(
        turn.events.some((e) => e.type === "session.error"),
        "no session.error",
      );
    },
  },
  endScenario("end-error-400", [httpError(400)]),
  endScenario("end-error-401", [httpError(401)]),
  endScenario("end-429-fast", [times(6, httpError(429, { retryAfterMs: 50 }))]),
  endScenario("end-500-fast", [times(6, httpError(500, { retryAfterMs: 50 }))]),
  endScenario("end-unknown-model", [], { model: { providerID: "fake", modelID: "nope" } }),
  endScenario("end-abort-stream", [hang({ text: "partial" })], {
    during: abortAfter("the streamed text", (e) => e.type === "message.part.updated" && (e.properties as { part: { type: string } }).part.type === "text"),
  }),
  endScenario("end-abort-retry", [times(6, httpError(429, { retryAfterMs: 30_000 }))], {
    during: abortAfter("a retry", (e) => e.type === "session.status" && (e.properties as { status: { type: string } }).status.type === "retry"),
  }),
  endScenario("end-permission-rejected", [toolCall("bash", { command: "echo x > rejected.txt", description: "reject me" }), text("never sent")], {
    server: { permission: { bash: "ask" } },
    during: async (client, _id, watch) => {
      const asked = await watch.waitFor("permission.asked", (e) => e.type === "permission.asked");
      await client.call("permission.reply", { path: { requestID: (asked.properties as { id: string }).id }, body: { reply: "reject" } });
    },
  }),
  endScenario(
    "end-question-rejected",
    [
      toolCall("question", {
        questions: [COLOR_QUESTION],
      }),
      text("never sent"),
    ],
    {
      during: async (client, _id, watch) => {
        const asked = await watch.waitFor("question.asked", (e) => e.type === "question.asked");
        await client.call("question.reject", { path: { requestID: (asked.properties as { id: string }).id } });
      },
    },
  ),
  {
    // opencode accepts the prompt (204) and never runs it: the watch must re-read to learn that.
    name: "end-unknown-agent",
    async run(client) {
      const session = await createSession(client, "end-unknown-agent");
      const watch = await watchSession(client, session.id);
      try {
        const body = { agent: UNKNOWN_AGENT, model: SCRIPTED_MODEL, parts: [{ type: "text" as const, text: "go" }] };
        await client.call("session.prompt_async", { path: { sessionID: session.id }, body });
        // The first error names the agent, the second repeats it with a stack trace; nothing follows.
        await watch.waitFor("the second session.error", () => watch.events.filter((e) => e.type === "session.error").length >= 2);
      } finally {
        watch.close();
      }
      // What opencode holds afterwards, read as the watch's two re-reads read it.
      const engine = new V1Engine(client);
      for (const read of [1, 2]) {
        const snap = await engine.snapshot(session.id);
        check(snap.activity === "idle" && snap.messages.length === 0, `read ${read}: ${snap.activity}, ${snap.messages.length} message(s)`);
      }
    },
  },
  {
    // opencode SIGSTOPped under a turn (alive, answering nothing), then continued. The first stream
    // holds the turn's start; it is closed during the stop, as the client's silence limit closes it.
    // The second is opened during the stop (answered at SIGCONT), followed by the reads a watch makes
    // on a reconnect, and holds what opencode did afterwards: the model answers 3 s after SIGCONT.
    name: "server-stopped",
    async run(client, server) {
      const engine = new V1Engine(client);
      const session = await createSession(client, "server stopped");
      server.model.forSession(session.id).queue(text(STOPPED_ANSWER, { delayMs: STOPPED_MS + 3_000 }));
      const first = await watchSession(client, session.id);
      await prompt(client, session.id, "answer after a stop");
      await server.model.waitForRequests(1, { sessionId: session.id, kind: "chat" });
      await first.waitFor("busy", (e) => e.type === "session.status" && e.properties.status.type === "busy");
      process.kill(server.pid, "SIGSTOP");
      let second: Promise<SessionWatch>;
      try {
        first.close();
        second = watchSession(client, session.id, { timeoutMs: 60_000 });
        await new Promise((resolve) => setTimeout(resolve, STOPPED_MS));
      } finally {
        process.kill(server.pid, "SIGCONT");
      }
      const watch = await second;
      try {
        const snap = await engine.snapshot(session.id);
        check(snap.activity === "busy", `after SIGCONT the session was ${snap.activity}`);
        await engine.listPending([session.id]);
        await watch.idle();
      } finally {
        watch.close();
      }
      const turn = await engine.lastTurn(session.id);
      const reply = turn.findLast((m) => m.info.role === "assistant");
      const answer = (reply?.parts ?? []).flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
      check(answer === STOPPED_ANSWER, `answer was ${JSON.stringify(answer)}`);
    },
  },
  {
    name: "providers",
    async run(client) {
      await client.call("config.providers");
      await client.call("provider.list");
    },
  },
  {
    name: "discovery",
    server: { config: DISCOVERY_CONFIG },
    async run(client) {
      // The discovery functions themselves make the reads, so the replay holds every request they make.
      const ctx = { engine: new V1Engine(client), hub: {} as EventHub, settings: {} };
      await serverStatus(ctx);
      await listModels(ctx);
      for (const kind of CATALOG_KINDS) await catalog(ctx, kind);
    },
  },
  {
    name: "session-history",
    server: { gitInit: true },
    async run(client, server) {
      const session = await createSession(client, "history");
      const child = await client.call("session.create", { body: { parentID: session.id, title: "Write tests" } });
      const watch = await watchSession(client, session.id);
      try {
        // Each turn is over once an idle follows its last step: the text `last` (or, failed, the error).
        const turn = async (
          steps: Step[],
          prompted: string,
          last: (e: { type: string; properties: any }) => boolean,
          model?: { providerID: string; modelID: string },
        ) => {
          const from = watch.events.length;
          server.model.forSession(session.id).queue(...steps);
          await prompt(client, session.id, prompted, model);
          await watch.waitFor(`the end of "${prompted}"`, (e) => {
            const end = watch.events.findIndex((m, i) => i >= from && last(m as never));
            return e.type === "session.idle" && end >= 0 && watch.events.indexOf(e) > end;
          });
          return watch.events.length;
        };
        const isText = (text: string) => (e: { type: string; properties: any }) =>
          e.type === "message.part.updated" &&
          e.properties.part.type === "text" &&
          e.properties.part.text === text &&
          e.properties.part.time?.end !== undefined;
        await turn([httpError(400)], "fail", (e) => e.type === "message.updated" && e.properties.info.error !== undefined);
        await turn([text("second")], "answer", isText("second"));
        const idle = await turn([toolCall("write", { filePath: `${server.directory}/a.txt`, content: "x\n" }), text("done")], "write a.txt", isText("done"), {
          providerID: "fake",
          modelID: "backup",
        });
        // The turn's diff is written a moment after it went idle, as the summary of its user message.
        await watch.waitFor("the write turn's diff", (e) => {
          const info = e.type === "message.updated" ? (e.properties.info as { role: string; summary?: { diffs?: unknown[] } }) : undefined;
          return watch.events.indexOf(e) >= idle - 1 && info?.role === "user" && (info.summary?.diffs?.length ?? 0) > 0;
        });
      } finally {
        watch.close();
      }
      // The session functions make the reads, in the order their tests make them. Events are not
      // recorded for them: the hub only subscribes, so the reads decide.
      const ctx: CoreContext = { engine: new V1Engine(client), hub: { subscribe: async () => () => undefined } as unknown as EventHub, settings: {} };
      await listSessions(ctx, { search: " history " });
      await listSessions(ctx, { parentId: session.id, search: "TEST" });
      await sessionInfo(ctx, session.id);
      await sessionInfo(ctx, MISSING_SESSION).catch(() => undefined);
      for (let page = await sessionMessages(ctx, session.id, { limit: 3 }); page.nextBefore;)
        page = await sessionMessages(ctx, session.id, { limit: 3, before: page.nextBefore });
      await sessionMessages(ctx, session.id);
      await sessionDiff(ctx, session.id);
      await sessionDiff(ctx, session.id, { messageId: (await readMessages(client, session.id))[0]!.info.id });
      await compactSession(ctx, session.id);
      await sessionDiff(ctx, session.id);
      await shellInSession(ctx, session.id, { command: "echo hi" });
      await compactSession(ctx, session.id, { model: "script" });
      await sessionDiff(ctx, child.id);
      await readMessages(client, session.id);
      check(child.parentID === session.id, "the child session has no parent");
    },
  },
  {
    name: "session-stop",
    async run(client, server) {
      const ctx: CoreContext = { engine: new V1Engine(client), hub: { subscribe: async () => () => undefined } as unknown as EventHub, settings: {} };
      const hasStatus = (type: string) => (e: { type: string; properties?: unknown }) =>
        e.type === "session.status" && (e.properties as { status: { type: string } }).status.type === type;
      const busy = await createSession(client, "busy");
      const retrying = await createSession(client, "retrying");
      const idle = await createSession(client, "idle");
      const started = async (id: string, steps: Step[], status: string) => {
        const watch = await watchSession(client, id);
        try {
          server.model.forSession(id).queue(...steps);
          await prompt(client, id, "go");
          await watch.waitFor(`status ${status}`, hasStatus(status) as (e: unknown) => boolean);
        } finally {
          watch.close();
        }
      };
      // The order the tests replay: a busy session read and aborted, a retrying one read and deleted, an idle one deleted.
      await started(busy.id, [hang()], "busy");
      check((await sessionInfo(ctx, busy.id)).status === "busy", "the hung turn was not busy");
      check((await abortSession(ctx, busy.id)).wasRunning, "abort saw no running turn");
      await started(retrying.id, [times(6, httpError(429, { retryAfterMs: 30_000 }))], "retry");
      check((await sessionInfo(ctx, retrying.id)).status === "retry", "the rate-limited turn was not retrying");
      check((await deleteSession(ctx, retrying.id)).aborted, "delete did not abort the retrying turn");
      check(!(await deleteSession(ctx, idle.id)).aborted, "delete aborted an idle session");
    },
  },
  {
    // test/support/recording/subagent-requests.ts. A sub-agent may start another when its agent has
    // a `task` rule (else its session denies `task`) and `subagent_depth` allows it: `general` does
    // here. The root's second sub-agent is `asker`, on the `backup` model, so that its step comes
    // from a queue of its own while `general`'s start at the same time.
    name: SUBAGENT_SCENARIO,
    server: {
      permission: { bash: "ask" },
      config: {
        subagent_depth: 2,
        agent: {
          general: { permission: { task: "allow" } },
          asker: { mode: "subagent", description: "Asks before it acts.", model: "fake/backup" },
        },
      },
    },
    async run(client, server) {
      const engine = new V1Engine(client);
      const watch = await watchAsked(server);
      try {
        // `general`'s steps come from the model's shared queue, in the order the sub-agents start.
        const started = async (title: string, steps: Step[], generalSteps: Step[], asks: number) => {
          const session = await createSession(client, title);
          server.model.forSession(session.id).queue(...steps);
          server.model.queue(...generalSteps);
          const asked = watch.until(watch.asked.length + asks);
          await prompt(client, session.id, "go");
          await asked;
          return session.id;
        };
        const unrelated = await started(UNRELATED_TITLE, [toolCall("task", task("unrelated helper").args)], [toolCall("bash", bash("echo u > u.txt").args)], 1);
        const deleted = await started(DELETED_TITLE, [toolCall("task", task("deleted helper").args)], [toolCall("bash", bash("echo d > d.txt").args)], 1);
        server.model.for("backup").queue(toolCall("bash", bash("echo a > a.txt").args));
        const root = await started(
          SUBAGENT_SCENARIO,
          [toolCalls([task("nesting helper"), task("asking helper", "asker"), bash("echo r > r.txt")])],
          [toolCall("task", task("grandchild helper").args), toolCall("bash", bash("echo g > g.txt").args)],
          3,
        );
        const before = await client.call("session.list");
        const results = await recordBlockingCalls(engine, { root, unrelated, asking: [...watch.asked] }, deleted);
        const after = await client.call("session.list");
        check(before.length === 8 && after.length === 6, `sessions listed: ${before.length} before the deletion, ${after.length} after`);
        check(results[0]!.requests.length === 3, `the root's call found ${results[0]!.requests.length} requests`);
      } finally {
        watch.close();
      }
    },
  },
];
