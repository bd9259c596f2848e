// When a running turn's wait re-reads the server because its stream stays quiet (quiet-rereads.ts):
// after QUIET_FIRST_MS without news, then at doubling delays up to QUIET_MAX_MS; news puts the read
// off, nothing is read once nobody waits, and a look that found the stream not live (no data since
// the quiet began) comes again after the first delay, not a doubled one.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { QUIET_FIRST_MS, QUIET_MAX_MS, QuietRereads } from "../../../../src/core/turns/quiet-rereads.js";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("quiet re-reads of a running turn", () => {
  it("reads after the first quiet, then at doubling delays up to the longest, while the stream stays quiet", () => {
    const due = vi.fn();
    const quiet = new QuietRereads(due);
    quiet.arm();
    vi.advanceTimersByTime(QUIET_FIRST_MS - 1);
    expect(due).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(due).toHaveBeenCalledTimes(1);
    const delays: number[] = [];
    for (let read = 0; read < 5; read++) {
      quiet.again();
      const before = Date.now();
      while (due.mock.calls.length === read + 1) vi.advanceTimersByTime(1_000);
      delays.push(Date.now() - before);
    }
    expect(delays).toEqual([2 * QUIET_FIRST_MS, 4 * QUIET_FIRST_MS, QUIET_MAX_MS, QUIET_MAX_MS, QUIET_MAX_MS]);
    quiet.disarm();
  });

  it("news of the turn's sessions starts the quiet over; a disarmed watch reads nothing", () => {
    const due = vi.fn();
    const quiet = new QuietRereads(due);
    quiet.arm();
    vi.advanceTimersByTime(QUIET_FIRST_MS - 2_000);
    quiet.heard();
    vi.advanceTimersByTime(QUIET_FIRST_MS - 1);
    expect(due).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(due).toHaveBeenCalledTimes(1);
    quiet.again();
    quiet.disarm();
    vi.advanceTimersByTime(QUIET_MAX_MS * 2);
    expect(due).toHaveBeenCalledTimes(1);
    // arm() again after a disarm starts from the first delay.
    quiet.arm();
    vi.advanceTimersByTime(QUIET_FIRST_MS);
    expect(due).toHaveBeenCalledTimes(2);
    quiet.disarm();
  });

  it("a look that found the stream not live comes again after the first delay, the quiet counted from its start; a read then doubles as before", () => {
    const due = vi.fn();
    const quiet = new QuietRereads(due);
    quiet.arm();
    const since = quiet.since;
    vi.advanceTimersByTime(QUIET_FIRST_MS);
    expect(due).toHaveBeenCalledTimes(1);
    // No heartbeat yet (2.x sends one every 15 s): nothing was read.
    quiet.notLive();
    expect(quiet.since).toBe(since);
    vi.advanceTimersByTime(QUIET_FIRST_MS - 1);
    expect(due).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    expect(due).toHaveBeenCalledTimes(2);
    // This time it read: the next read after a doubled quiet.
    quiet.again();
    vi.advanceTimersByTime(2 * QUIET_FIRST_MS - 1);
    expect(due).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(1);
    expect(due).toHaveBeenCalledTimes(3);
    quiet.disarm();
    quiet.notLive();
    vi.advanceTimersByTime(QUIET_MAX_MS);
    expect(due).toHaveBeenCalledTimes(3);
  });
});
