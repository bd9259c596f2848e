// Replay of the tool-turn recording: a write tool call, completed, then the final text.
import { describe, expect, it } from "vitest";
import type { Schemas } from "../../../src/client/index.js";
import { useReplay } from "../../support/replay.js";
import { createSession, promptAndWait } from "../../support/turns.js";

const replay = useReplay("tool-turn");

describe("replay: tool-turn", () => {
  it("shows the write tool part going pending → running → completed, then the answer", async () => {
    const client = replay.connect();
    const session = await createSession(client, "tool turn");

    const turn = await promptAndWait(client, session.id, "write hello.txt", { timeoutMs: 10_000 });

    const statuses = turn.events.flatMap((e) =>
      e.type === "message.part.updated" && e.properties.part.type === "tool" ? [e.properties.part.state.status] : [],
    );
    expect(statuses[0]).toBe("pending");
    expect(statuses.at(-1)).toBe("completed");
    const tool = turn.messages.flatMap((m) => m.parts).find((p): p is Schemas["ToolPart"] => p.type === "tool");
    expect(tool).toMatchObject({ tool: "write", state: { status: "completed", input: { filePath: "/project/hello.txt", content: "hello\n" } } });
    expect(turn.answer).toBe("done");
  });
});
