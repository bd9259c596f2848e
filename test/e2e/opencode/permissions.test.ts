// opencode's permission flow through our client, with `bash: "ask"` in the config (docs/opencode-behaviour.md §5):
// `once` lets the command run (its file appears); `reject` stops the turn without another model call.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type OpencodeClient } from "../../../src/client/index.js";
import type { EventOf, Schemas } from "../../../src/client/types.js";
import { startOpencode, type TestOpencode } from "../../support/opencode.js";
import { text, toolCall } from "../../support/scripted-model.js";
import { createSession, lastAssistant, prompt, readMessages, watchSession, type SessionWatch } from "../../support/turns.js";

let server: TestOpencode;
let client: OpencodeClient;

beforeAll(async () => {
  server = await startOpencode({ permission: { bash: "ask" } });
  client = connect({ url: server.url, password: server.password, directory: server.directory });
});
afterAll(async () => {
  await server?.stop();
});

const isAsked = (e: { type: string }): e is EventOf<"permission.asked"> => e.type === "permission.asked";

/** Prompts a bash call and resolves at its `permission.asked`, with the watch still open. */
async function askBash(command: string, title: string): Promise<{ sessionId: string; watch: SessionWatch; asked: EventOf<"permission.asked"> }> {
  const session = await createSession(client, title);
  server.model.forSession(session.id).queue(toolCall("bash", { command, description: title }), text("done"));
  const watch = await watchSession(client, session.id);
  try {
    await prompt(client, session.id, `run ${command}`);
    const asked = await watch.waitFor("permission.asked", isAsked);
    return { sessionId: session.id, watch, asked };
  } catch (error) {
    watch.close();
    throw error;
  }
}

describe("opencode permissions through the client", () => {
  it("asks, lists the request, and runs the command after reply once", async () => {
    const { sessionId, watch, asked } = await askBash("echo x > approved.txt", "approve once");
    try {
      expect(asked.properties).toMatchObject({ sessionID: sessionId, permission: "bash", patterns: ["echo x > approved.txt"] });
      // Nothing ran yet: the session waits (status stays busy) and the file is not there.
      expect(existsSync(join(server.directory, "approved.txt"))).toBe(false);

      const listed = await client.call("permission.list");
      expect(listed.filter((p) => p.sessionID === sessionId)).toEqual([asked.properties]);

      expect(await client.call("permission.reply", { path: { requestID: asked.properties.id }, body: { reply: "once" } })).toBe(true);
      await watch.idle();
      expect(watch.events.map((e) => e.type)).toContain("permission.replied");
    } finally {
      watch.close();
    }

    expect(await readFile(join(server.directory, "approved.txt"), "utf8")).toBe("x\n");
    expect(server.model.requestsFor(sessionId)).toHaveLength(2); // the loop went on to the next model call
    expect((await client.call("permission.list")).filter((p) => p.sessionID === sessionId)).toEqual([]);
  });

  it("stops the turn cleanly on reject: tool error, no further model request", async () => {
    const { sessionId, watch, asked } = await askBash("echo y > rejected.txt", "reject");
    try {
      expect(await client.call("permission.reply", { path: { requestID: asked.properties.id }, body: { reply: "reject" } })).toBe(true);
      await watch.idle();
      expect(watch.events.map((e) => e.type)).not.toContain("session.error");
    } finally {
      watch.close();
    }

    expect(existsSync(join(server.directory, "rejected.txt"))).toBe(false);
    expect(server.model.requestsFor(sessionId)).toHaveLength(1);
    expect(server.model.forSession(sessionId).remaining()).toBe(1); // the final text was never asked for
    const messages = await readMessages(client, sessionId);
    const tool = messages.flatMap((m) => m.parts).find((p): p is Schemas["ToolPart"] => p.type === "tool");
    expect(tool?.state.status).toBe("error");
    expect(tool?.state.status === "error" && tool.state.error).toContain("rejected permission");
    const assistant = lastAssistant(messages)!.info as Schemas["AssistantMessage"];
    expect(assistant.finish).toBe("tool-calls");
    expect(assistant.error).toBeUndefined();
  });
});
