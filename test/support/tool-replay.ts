// The tools' unit tests: the real MCP server and client in memory (mcp-memory.ts) on the fake
// opencode (fake-opencode.ts) serving one recorded tool scenario (`npm run record -- --tools`).
// `replay(n)` makes the scenario's first n recorded calls again, in order, on a fresh server and
// a fresh replay, so no test depends on another's state. Requests the recording does not hold
// fail the test.
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { fakeOpencode, type FakeOpencode } from "./fake-opencode.js";
import { loadFixture, type Fixture, type RecordedToolCall } from "./fixture.js";
import type { ToolCall } from "./mcp-client.js";
import { memoryMcp, type MemoryMcp, type MemoryMcpOptions } from "./mcp-memory.js";
import { recordedCallOutcome, TURN_TOOLS, type RecordedCallOutcome, type TurnOutcome } from "./recorded-outcome.js";

export interface ToolReplay {
  fixture: Fixture;
  calls: RecordedToolCall[];
  /** Replays the first `count` recorded calls (default: all) and returns their results. */
  replay(count?: number): Promise<ToolCall[]>;
  /** A server on the replay for calls of the test's own (e.g. input errors that must send nothing). */
  mcp(options?: MemoryMcpOptions): Promise<MemoryMcp>;
  /** Requests of the current test the recording could not answer; a non-empty list fails the test. */
  unrecorded: string[];
}

/** Wires the replay of test/fixtures/<version>/tools/<scenario>.json into the calling file's tests. */
export function useToolReplay(scenario: string, options: { env?: Record<string, string> } = {}): ToolReplay {
  return useFake(loadFixture(`tools/${scenario}`), options);
}

/** The replay of a recording given whole (a test's edited copy of one, say). */
export function useFixtureReplay(fixture: Fixture, options: { env?: Record<string, string> } = {}): ToolReplay {
  return useFake(fixture, options);
}

/** A fake opencode that holds nothing: for calls that must be refused before any request (a request fails the test). */
export function useNoOpencode(options: { env?: Record<string, string> } = {}): ToolReplay {
  return useFake({ scenario: "nothing (input errors)", opencodeVersion: "none", interactions: [] }, options);
}

function useFake(fixture: Fixture, options: { env?: Record<string, string> }): ToolReplay {
  const scenario = fixture.scenario;
  const calls = fixture.calls ?? [];
  const unrecorded: string[] = [];
  const open: MemoryMcp[] = [];
  const server = setupServer();
  let fake: FakeOpencode;
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
  beforeEach(() => {
    unrecorded.length = 0;
    // Every request must be one the recording holds, as many times as it holds it: a tool that
    // reads more than the live call did fails. An event waits for the requests and calls recorded
    // before it up to 20 s, longer than any wait a recorded call makes, so a timed-out wait cannot
    // see a later call's events.
    fake = fakeOpencode(fixture, { unrecorded, maxEventWaitMs: 20_000 });
    server.resetHandlers(...fake.handlers);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((m) => m.close()));
    if (unrecorded.length) throw new Error(`requests not in the recording "${scenario}": ${unrecorded.join(", ")}`);
  });
  afterAll(() => server.close());

  const mcp = async (o: MemoryMcpOptions = {}) => {
    const m = await memoryMcp({ ...o, env: { ...options.env, ...o.env } });
    open.push(m);
    return m;
  };
  return {
    fixture,
    calls,
    unrecorded,
    mcp,
    async replay(count = calls.length) {
      const m = await mcp();
      const results: ToolCall[] = [];
      for (const [index, c] of calls.slice(0, count).entries()) {
        fake.callMade(index);
        results.push(await m.call(c.tool, c.arguments));
      }
      return results;
    },
  };
}

/**
 * What opencode recorded of a session: the scenario's closing read of its messages (or, for a
 * session deleted by the scenario, the last successful read of them).
 */
export function recordedMessages(fixture: Fixture, sessionId: string): Array<{ info: Record<string, any>; parts: Array<Record<string, any>> }> {
  const reads = fixture.interactions.filter((i) => i.method === "GET" && i.path === `/session/${sessionId}/message` && i.status === 200);
  const read = reads.findLast((i) => Object.keys(i.query).every((k) => k === "directory")) ?? reads.at(-1);
  if (!read) throw new Error(`the recording "${fixture.scenario}" holds no read of ${sessionId}'s messages`);
  return read.body as never;
}

/** The last assistant message opencode recorded for a session. */
export function recordedLastReply(fixture: Fixture, sessionId: string) {
  return recordedMessages(fixture, sessionId).findLast((m) => m.info.role === "assistant");
}

/**
 * The replayed call answered what opencode's record says (test/support/recorded-outcome.ts): an
 * error when opencode answered the call with one; for a turn tool the status opencode's messages,
 * events and requests bear out, with the recorded error's name, the last reply's text and the
 * turn's tokens; for a batch each task's status. Never compared with what the conductor answered
 * when it was recorded (`calls[].recorded` is for people reading the fixture).
 */
export function expectAsRecorded(result: ToolCall, fixture: Fixture, index: number): RecordedCallOutcome {
  const expected = recordedCallOutcome(fixture, index);
  if (expected.isError !== undefined) expect(result.isError, result.text).toBe(expected.isError);
  const outcome = expected.outcome;
  if (outcome) {
    expect(result.data.status, result.text).toBe(outcome.status);
    expectSameTurn(result.data, outcome);
  }
  const batch = result.data.results as Array<Record<string, unknown>> | undefined;
  if (Array.isArray(batch) && Object.keys(expected.sessions).length > 0) {
    expect(batch.map((r) => r.session_id).sort()).toEqual(Object.keys(expected.sessions).sort());
    for (const r of batch) {
      const recorded = expected.sessions[r.session_id as string]!;
      expect(r.status, JSON.stringify(r)).toBe(recorded.status);
      expectSameTurn(r, recorded);
    }
  }
  return expected;
}

/** The fields of a turn's report that opencode's record fixes: the error's name, the answer, the tokens. */
function expectSameTurn(data: Record<string, unknown>, recorded: TurnOutcome): void {
  const error = data.error as { name?: string } | undefined;
  if (recorded.error && (recorded.status === "error" || recorded.status === "interrupted")) expect(error?.name).toBe(recorded.error.name);
  if (recorded.status === "done") {
    expect(error).toBeUndefined();
    if ("answer" in data) expect(data.answer).toBe(recorded.answer);
    const tokens = data.tokens as { total?: number } | number | undefined;
    if (tokens !== undefined) expect(typeof tokens === "number" ? tokens : tokens.total).toBe(recorded.tokens);
  }
}

/** An error a model can act on: says what was wrong, bounded, no stack trace. */
export function expectCleanError(result: ToolCall, message: RegExp | string): void {
  expect(result.isError, result.text).toBe(true);
  expect(result.text).toMatch(message);
  expect(result.text.length).toBeLessThan(1_000);
  expect(result.text).not.toMatch(/\n\s+at /);
}

/** Events of one type in the recorded event stream (1.x wraps them in `payload`). */
export function recordedEvents(fixture: Fixture, type: string): Array<{ type: string; properties: Record<string, any> }> {
  return fixture.interactions
    .flatMap((i) => i.events ?? [])
    .map((e) => ((e.data as { payload?: unknown }).payload ?? e.data) as { type: string; properties: Record<string, any> })
    .filter((e) => e.type === type);
}

/** One row of a tool's table of recorded calls: call `call` of `scenario` answers `answer`. */
export interface RecordedRow {
  scenario: string;
  /** Index of the call in the scenario's recorded calls (the calls before it are replayed first). */
  call: number;
  /**
   * A turn status (done, error, blocked, …), or "ok" (any answer that is not an error), or "tool
   * error" (isError). Checked against opencode's record too, so a row cannot claim what it did not record.
   */
  answer: string;
  /** What else the answer must say; compare with the recording where it names opencode's record. */
  check?(result: ToolCall, replay: ToolReplay, earlier: ToolCall[]): void;
}

/** Table-driven handler tests of one tool on recorded calls: one test per row, each on a fresh replay. */
export function describeRecordedCalls(tool: string, rows: RecordedRow[]): void {
  describe.each(rows)(`${tool} on the recording $scenario, call $call`, (row) => {
    const replay = useToolReplay(row.scenario);
    it(`answers ${row.answer}, as opencode recorded it`, () => expectRecordedRow(tool, row, replay));
  });
}

/** One row's test (describeRecordedCalls): the replayed call answers the row's answer, and opencode's record bears it out. */
export async function expectRecordedRow(tool: string, row: RecordedRow, replay: ToolReplay): Promise<void> {
  const results = await replay.replay(row.call + 1);
  const result = results[row.call]!;
  expect(replay.calls[row.call]!.tool).toBe(tool);
  const expected = expectAsRecorded(result, replay.fixture, row.call);
  if (row.answer === "tool error") {
    expect(result.isError, result.text).toBe(true);
    expect(expected.isError).not.toBe(false);
  } else {
    expect(result.isError, result.text).toBe(false);
    expect(expected.isError).not.toBe(true);
    if (row.answer !== "ok") {
      expect(result.data.status).toBe(row.answer);
      expect(expected.outcome?.status, "the row's answer is what opencode recorded").toBe(row.answer);
    }
  }
  row.check?.(result, replay, results.slice(0, row.call));
}

/**
 * The answer a recording stores for call `index` (what the live call answered, `calls[].recorded`)
 * agrees with what opencode recorded of that call: a recording made while the conductor had a bug,
 * or edited by hand, fails here instead of teaching the tests the bug.
 */
export function expectStoredAnswerAsRecorded(fixture: Fixture, index: number): void {
  const call = fixture.calls![index]!;
  const derived = recordedCallOutcome(fixture, index);
  if (derived.isError !== undefined) expect(call.recorded.isError, "the stored answer is an error as opencode's record says").toBe(derived.isError);
  if (TURN_TOOLS.has(call.tool) && !call.recorded.isError)
    expect(call.recorded.status, "the stored status is the one opencode's record bears out").toBe(derived.outcome?.status);
}
