// Replay of the permission recording: permission.asked, listed by permission.list, replied once.
import { describe, expect, it } from "vitest";
import type { EventOf, Schemas } from "../../../src/client/index.js";
import { useReplay } from "../../support/replay.js";
import { createSession, prompt, readMessages, watchSession } from "../../support/turns.js";

const replay = useReplay("permission");

describe("replay: permission", () => {
  it("lists the asked permission, and the command runs after reply once", async () => {
    const client = replay.connect();
    const session = await createSession(client, "permission");
    const watch = await watchSession(client, session.id, { timeoutMs: 10_000 });
    try {
      await prompt(client, session.id, "run echo");
      const asked = await watch.waitFor("permission.asked", (e): e is EventOf<"permission.asked"> => e.type === "permission.asked");
      expect(asked.properties).toMatchObject({ sessionID: session.id, permission: "bash", patterns: ["echo x > approved.txt"] });

      expect(await client.call("permission.list")).toEqual([asked.properties]);
      expect(await client.call("permission.reply", { path: { requestID: asked.properties.id }, body: { reply: "once" } })).toBe(true);
      await watch.idle();
      expect(watch.events.map((e) => e.type)).toContain("permission.replied");
    } finally {
      watch.close();
    }
    const tool = (await readMessages(client, session.id)).flatMap((m) => m.parts).find((p): p is Schemas["ToolPart"] => p.type === "tool");
    expect(tool).toMatchObject({ tool: "bash", state: { status: "completed" } });
  });
});
