// The scenarios `npm run record -- --v2` runs against the real opencode 2.x harness, through the v2
// client (so the recording holds exactly the adapter's requests) with the event stream open from
// before the first request until the turn's outcome event.
import type { OpencodeV2Client } from "../../../src/client/v2/index.js";
import type { V2ScenarioName } from "../fixture.js";
import type { StartOpencodeOptions, TestOpencode } from "../opencode.js";
import { join } from "node:path";
import { V2Engine } from "../../../src/core/engine/v2/v2-engine.js";
import { delay, hang, httpError, text, toolCall, toolCalls, type Step } from "../scripted-model.js";
import { isOutcome, type EventLog } from "../v2-events.js";
import { COLOUR_QUESTION } from "../questions.js";
import { DELETED_TITLE, recordBlockingCalls, SUBAGENT_SCENARIO, UNRELATED_TITLE } from "./subagent-requests.js";

export interface V2Scenario {
  name: V2ScenarioName;
  server?: Omit<StartOpencodeOptions, "binary">;
  /** The outcome event the turn must end with. */
  outcome: "session.execution.succeeded" | "session.execution.failed" | "session.execution.interrupted";
  run(client: OpencodeV2Client, server: TestOpencode, log: EventLog, sessionID: string): Promise<void>;
}

const prompt = (client: OpencodeV2Client, sessionID: string, text: string, delivery?: "steer" | "queue") =>
  client.request("session.prompt", { path: { sessionID }, body: delivery ? { text, delivery } : { text } });
const messages = (client: OpencodeV2Client, sessionID: string) => client.request("session.messages", { path: { sessionID }, query: { order: "asc" } });

/** A turn nobody has to act on: prompt, wait for its outcome event, read the messages. */
async function plainTurn(client: OpencodeV2Client, log: EventLog, sessionID: string, text: string): Promise<void> {
  await prompt(client, sessionID, text);
  await log.waitFor(isOutcome(sessionID));
  await messages(client, sessionID);
}

/** A shell call that asks for permission (`shell: ask`), answered with `reply`. */
function permissionScenario(name: V2ScenarioName, reply: "once" | "reject", command: string, outcome: V2Scenario["outcome"]): V2Scenario {
  return {
    name,
    server: { permission: { shell: "ask" } },
    outcome,
    async run(client, server, log, id) {
      server.model.forSession(id).queue(toolCall("shell", { command }), text("done"));
      await prompt(client, id, "run it");
      const asked = await log.waitFor((e) => e.type === "permission.asked" && e.data.sessionID === id);
      await client.request("permission.list", { path: { sessionID: id } });
      await client.request("permission.reply", { path: { sessionID: id, requestID: asked.data.id as string }, body: { reply } });
      await log.waitFor(isOutcome(id));
      await messages(client, id);
    },
  };
}

/** The engine's argument-free reads, in the order a catalog or status call makes them. */
const READS = [
  "server.info",
  "session.active",
  "model.default",
  "model.list",
  "provider.list",
  "catalog.list",
  "agent.list",
  "skill.list",
  "command.list",
  "config.get",
  "mcp.list",
  "project.list",
  "permission.requests",
  "form.requests",
] as const;

/** 2.x's sub-agent: the `subagent` tool, by default with the built-in `general` agent. */
const subagent = (description: string, agent = "general") => ({ name: "subagent", args: { agent, description, prompt: `${description}, then say so` } });
const shell = (command: string) => ({ name: "shell", args: { command } });

export const v2Scenarios: V2Scenario[] = [
  {
    name: "text-turn",
    outcome: "session.execution.succeeded",
    async run(client, server, log, id) {
      server.model.forSession(id).queue(text("Hello from scripted."));
      await plainTurn(client, log, id, "say hello");
    },
  },
  {
    name: "write-turn",
    outcome: "session.execution.succeeded",
    async run(client, server, log, id) {
      server.model.forSession(id).queue(toolCall("write", { path: `${server.directory}/hello.txt`, content: "hello\n" }), text("done"));
      await plainTurn(client, log, id, "write hello.txt");
    },
  },
  {
    name: "http-400",
    outcome: "session.execution.failed",
    async run(client, server, log, id) {
      server.model.forSession(id).queue(httpError(400));
      await plainTurn(client, log, id, "fail");
    },
  },
  {
    name: "interrupt",
    outcome: "session.execution.interrupted",
    async run(client, server, log, id) {
      server.model.forSession(id).queue(hang({ text: "partial " }));
      await prompt(client, id, "hang");
      await log.waitFor((e) => e.type === "session.text.started" && e.data.sessionID === id);
      await client.request("session.active", {});
      await client.request("session.interrupt", { path: { sessionID: id } });
      await log.waitFor(isOutcome(id));
      await messages(client, id);
    },
  },
  permissionScenario("permission", "once", "echo x > approved.txt", "session.execution.succeeded"),
  {
    name: "question",
    outcome: "session.execution.succeeded",
    async run(client, server, log, id) {
      const question = COLOUR_QUESTION;
      server.model.forSession(id).queue(toolCall("question", { questions: [question] }), text("blue it is"));
      await prompt(client, id, "ask me");
      const created = await log.waitFor((e) => e.type === "form.created" && (e.data.form as { sessionID?: string }).sessionID === id);
      const formID = (created.data.form as { id: string }).id;
      await client.request("form.list", { path: { sessionID: id } });
      await client.request("form.reply", { path: { sessionID: id, formID }, body: { answer: { q0: "blue" } } });
      await log.waitFor(isOutcome(id));
      await messages(client, id);
    },
  },
  permissionScenario("permission-rejected", "reject", "echo no > rejected.txt", "session.execution.interrupted"),
  {
    // A turn, then every read the v2 engine makes of catalogs, sessions and pending requests: their
    // answers are what the request contract test (test/unit/contract/) replays to the engine.
    name: "reads",
    outcome: "session.execution.succeeded",
    async run(client, server, log, id) {
      server.model.forSession(id).queue(text("read back"));
      await prompt(client, id, "read");
      await log.waitFor(isOutcome(id));
      for (const name of READS) await client.request(name, {});
      await client.request("session.get", { path: { sessionID: id } });
      await client.request("session.list", { query: { limit: "5" } });
      await messages(client, id);
    },
  },
  {
    // A second prompt steered into the running execution: one execution, one outcome for both prompts.
    name: "steer",
    outcome: "session.execution.succeeded",
    async run(client, server, log, id) {
      server.model.forSession(id).queue(toolCall("read", { path: join(server.directory, "README.md") }), text("answer one"));
      await prompt(client, id, "first");
      await log.waitFor((e) => e.type === "session.tool.called" && e.data.sessionID === id);
      await prompt(client, id, "second", "steer");
      await log.waitFor(isOutcome(id));
      await messages(client, id);
    },
  },
  {
    // A step that nearly fills the context (85,000 of 100,000 tokens, 2.x's buffer 20,000): 2.x
    // compacts by itself before the next step, and the summary call fails, which ends the execution.
    name: "compaction-failed",
    server: { config: { provider: { fake: { models: { scripted: { name: "Scripted", limit: { context: 100_000, output: 1_000 } } } } } } },
    outcome: "session.execution.failed",
    async run(client, server, log, id) {
      server.model
        .forSession(id)
        .queue(toolCall("shell", { command: "echo full", description: "say it" }, { usage: { prompt_tokens: 85_000, completion_tokens: 20 } }), httpError(400));
      await plainTurn(client, log, id, "fill the context");
    },
  },
  {
    // test/support/recording/subagent-requests.ts. `general` denies itself `subagent` and
    // `experimental.subagent_depth` defaults to 1: both are lifted so that a sub-agent starts
    // another. The root's second sub-agent is `asker`, on the `backup` model, so that its step
    // comes from a queue of its own while `general`'s start at the same time. Then the root's
    // requests are answered and its execution ends; the others stay open.
    name: SUBAGENT_SCENARIO,
    server: {
      permission: { shell: "ask" },
      config: {
        experimental: { subagent_depth: 2 },
        agent: {
          general: { permission: { subagent: "allow" } },
          asker: { mode: "subagent", description: "Asks before it acts.", model: "fake/backup" },
        },
      },
    },
    outcome: "session.execution.succeeded",
    async run(client, server, log, root) {
      const engine = new V2Engine(client, server.directory);
      const asked = () => log.events.filter((e) => e.type === "permission.asked").map((e) => e.data.sessionID as string);
      // `general`'s steps come from the model's shared queue, in the order the sub-agents start.
      const started = async (id: string, steps: Step[], generalSteps: Step[], asks: number) => {
        server.model.forSession(id).queue(...steps);
        server.model.queue(...generalSteps);
        const before = asked().length;
        await prompt(client, id, "go");
        await log.waitFor(() => asked().length >= before + asks, { what: `${asks} more permission(s) asked` });
        return id;
      };
      const create = async (title: string) => ((await client.request("session.create", { body: { title } })) as { data: { id: string } }).data.id;
      const unrelated = await started(
        await create(UNRELATED_TITLE),
        [toolCall("subagent", subagent("unrelated helper").args)],
        [toolCall("shell", shell("echo u > u.txt").args)],
        1,
      );
      const deleted = await started(
        await create(DELETED_TITLE),
        [toolCall("subagent", subagent("deleted helper").args)],
        [toolCall("shell", shell("echo d > d.txt").args)],
        1,
      );
      server.model.for("backup").queue(toolCall("shell", shell("echo a > a.txt").args), text("asker done"));
      await started(
        root,
        [toolCalls([subagent("nesting helper"), subagent("asking helper", "asker"), shell("echo r > r.txt")]), text("root done")],
        [
          toolCall("subagent", subagent("grandchild helper").args),
          toolCall("shell", shell("echo g > g.txt").args),
          text("grandchild done"),
          text("nesting done"),
        ],
        3,
      );
      const list = async () => ((await client.request("session.list", {})) as { data: unknown[] }).data;
      const before = await list();
      const results = await recordBlockingCalls(engine, { root, unrelated, asking: asked() }, deleted);
      const after = await list();
      if (before.length !== 8 || after.length !== 6)
        throw new Error(`recording went wrong: sessions listed: ${before.length} before the deletion, ${after.length} after`);
      const found = results[0]!.requests;
      if (found.length !== 3) throw new Error(`recording went wrong: the root's call found ${found.length} requests`);
      for (const request of found) await engine.answerPermission({ requestId: request.id, sessionId: request.sessionId, decision: "once" });
      await log.waitFor(isOutcome(root));
      await messages(client, root);
    },
  },
  {
    // A sub-agent started in the background (`subagent` with `background: true`, on a model of its
    // own so its steps take their own script) ends while the parent's next step still runs:
    // opencode's notice of its end (a synthetic input, `metadata.source: "subagent"`) joins the
    // parent's execution and one more step answers it; one outcome for the parent.
    name: "subagent-notice",
    server: { config: { agent: { general: { model: "fake/backup" } } } },
    outcome: "session.execution.succeeded",
    async run(client, server, log, id) {
      server.model.for("backup").queue(text("child: done"));
      server.model
        .forSession(id)
        .queue(
          toolCall("subagent", { agent: "general", description: "quick work", prompt: "work quickly", background: true }),
          delay(3_000, text("parent: started it")),
          text("parent: the child is done"),
        );
      await plainTurn(client, log, id, "start a quick sub-agent in the background");
    },
  },
];
