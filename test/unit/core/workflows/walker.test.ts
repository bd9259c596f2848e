// Who may resume a run: a walker on this machine is alive while its process is (pid and start time
// checked), a walker on another machine while its heartbeat in the run record is recent.
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { thisProcess } from "../../../../src/core/ledger/record.js";
import { SILENT_WALKER_MS, walkerGone } from "../../../../src/core/workflows/walker.js";

const now = Date.parse("2026-12-03T12:00:00.000Z");
const ago = (ms: number) => new Date(now - ms).toISOString();

describe("walkerGone", () => {
  it("on this machine: alive while its process is, whatever the heartbeat says", () => {
    expect(walkerGone({ owner: thisProcess(), updatedAt: ago(3_600_000) }, now)).toBe(false);
    // The same pid with another start time is another process: the walker that had it is gone.
    const me = thisProcess();
    expect(me.startTime).toBeDefined();
    expect(walkerGone({ owner: { ...me, startTime: me.startTime! - 1 }, updatedAt: ago(0) }, now)).toBe(true);
  });

  it("on another machine: alive while its heartbeat (or, before the first, the record's last change) is within four beats", () => {
    const owner = { pid: 4242, host: `${hostname()}-elsewhere`, startTime: 1 };
    expect(walkerGone({ owner, heartbeatAt: ago(SILENT_WALKER_MS - 1_000), updatedAt: ago(SILENT_WALKER_MS * 10) }, now)).toBe(false);
    expect(walkerGone({ owner, heartbeatAt: ago(SILENT_WALKER_MS + 1_000), updatedAt: ago(SILENT_WALKER_MS + 1_000) }, now)).toBe(true);
    expect(walkerGone({ owner, updatedAt: ago(1_000) }, now)).toBe(false);
    expect(walkerGone({ owner, updatedAt: ago(SILENT_WALKER_MS + 1_000) }, now)).toBe(true);
  });
});
