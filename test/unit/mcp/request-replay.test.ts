// Idempotent starts: a recorded request_id replays instead of starting; a duplicate that arrives
// while the first call is still creating its session waits for it and replays; another tool's id is refused.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config.js";
import { RequestLog } from "../../../src/core/governance/request-ids.js";
import { startOnce } from "../../../src/mcp/request-replay.js";
import type { ToolContext } from "../../../src/mcp/tool-def.js";

const dir = mkdtempSync(join(tmpdir(), "occ-replay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ctx = { config: { stateDir: dir } as Config, requests: new RequestLog(dir) } as unknown as ToolContext;

describe("startOnce", () => {
  it("starts once; concurrent and later repeats replay the recorded sessions", async () => {
    let starts = 0;
    let endTurn!: () => void;
    const turnEnded = new Promise<void>((r) => (endTurn = r));
    const start = async (onSession?: (id: string, index: number) => Promise<void>) => {
      starts++;
      await onSession!("ses_1", 0);
      await turnEnded; // the turn goes on after the session is recorded
      return "started";
    };
    const replay = async (record: { sessionIds: string[] }) => `replayed ${record.sessionIds.join(",")}`;
    const first = startOnce(ctx, "oc_delegate", "req-a", 1, start, replay);
    const duplicate = startOnce(ctx, "oc_delegate", "req-a", 1, start, replay);
    // The duplicate gets the session while the first call still waits for its turn.
    expect(await duplicate).toBe("replayed ses_1");
    endTurn();
    expect(await first).toBe("started");
    expect(await startOnce(ctx, "oc_delegate", "req-a", 1, start, replay)).toBe("replayed ses_1");
    // A new process (restart) reads the same state dir.
    const restarted = { ...ctx, requests: new RequestLog(dir) } as ToolContext;
    expect(await startOnce(restarted, "oc_delegate", "req-a", 1, start, replay)).toBe("replayed ses_1");
    expect(starts).toBe(1);
  });

  it("refuses an id used by another tool, and lets a start that failed before any session be retried", async () => {
    await startOnce(
      ctx,
      "oc_delegate",
      "req-b",
      1,
      async (on) => (await on!("ses_2", 0), "x"),
      async () => "y",
    );
    await expect(
      startOnce(
        ctx,
        "oc_delegate_parallel",
        "req-b",
        1,
        async () => "x",
        async () => "y",
      ),
    ).rejects.toThrow(/was used for oc_delegate/);
    await expect(
      startOnce(
        ctx,
        "oc_delegate",
        "req-c",
        1,
        async () => Promise.reject(new Error("bad directory")),
        async () => "y",
      ),
    ).rejects.toThrow("bad directory");
    expect(
      await startOnce(
        ctx,
        "oc_delegate",
        "req-c",
        1,
        async () => "started",
        async () => "replayed",
      ),
    ).toBe("started");
  });

  it("runs without an id as a plain start", async () => {
    expect(
      await startOnce(
        ctx,
        "oc_delegate",
        undefined,
        1,
        async (on) => (on === undefined ? "plain" : "recorded"),
        async () => "replayed",
      ),
    ).toBe("plain");
  });
});
