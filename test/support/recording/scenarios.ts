// The scenarios `npm run record` runs against the real opencode harness. Each one drives the
// client exactly as its replay test does, so the replay serves every request the test makes.
import { NotFoundError, type OpencodeClient } from "../../../src/client/index.js";
import type { ScenarioName } from "../fixture.js";
import type { StartOpencodeOptions, TestOpencode } from "../opencode.js";
import { httpError, text, times, toolCall } from "../scripted-model.js";
import { createSession, prompt, promptAndWait, readMessages, watchSession } from "../turns.js";

export interface Scenario {
  name: ScenarioName;
  server?: StartOpencodeOptions;
  /** Runs the calls to record through `client` (the recording one). */
  run(client: OpencodeClient, server: TestOpencode): Promise<void>;
}

/** A session id that does not exist (same shape as a real one). */
export const MISSING_SESSION = "ses_0000000000000000000000000";
export const TEXT_ANSWER = "Hello from scripted.";

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`recording went wrong: ${what}`);
}

export const scenarios: Scenario[] = [
  {
    name: "session-crud",
    async run(client) {
      const created = await createSession(client, "crud");
      const listed = await client.call("session.list");
      check(listed.some((s) => s.id === created.id), "session.list misses the new session");
      await client.call("session.get", { path: { sessionID: created.id } });
      const missing = await client.call("session.get", { path: { sessionID: MISSING_SESSION } }).catch((e: unknown) => e);
      check(missing instanceof NotFoundError, "session.get of a missing id did not give 404");
    },
  },
  {
    name: "text-turn",
    async run(client, server) {
      const session = await createSession(client, "text turn");
      server.model.forSession(session.id).queue(text(TEXT_ANSWER));
      const turn = await promptAndWait(client, session.id, "say hello");
      check(turn.answer === TEXT_ANSWER, `answer was ${JSON.stringify(turn.answer)}`);
    },
  },
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
      check(turn.events.some((e) => e.type === "session.error"), "no session.error");
    },
  },
  {
    name: "providers",
    async run(client) {
      await client.call("config.providers");
      await client.call("provider.list");
    },
  },
];
